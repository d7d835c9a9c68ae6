--[[
  Operator: one page of a tenant's records by state, from the tenant's listing
  index (never a scan of the keyspace). The index orders every record by updatedAtMs, then key;
  the state is read from each record (its first value, without decoding the rest). A page of
  indeterminate and abandoned records only pages the tenant's attention index instead, which
  holds just those; any other page of a rare state examines the entries of the others. Read-mostly: an index entry whose record is
  gone is pruned here, and entries of an earlier layout are converted first.

  Input:
    KEYS[1] listing index of the tenant (`<base>:i:{tag}`)
    KEYS[2] expiry index of the tenant (`<base>:x:{tag}`)

    ARGV[1] order: 'oldest' or 'newest'
    ARGV[2] limit (records in the page)
    ARGV[3] index entries the page examines at most (its scan budget)
    ARGV[4] state letters: any of 'i' indeterminate, 'a' abandoned, 'c' completed, 'p' in progress,
            'w' awaiting_approval, 'y' approved, 'n' denied
    ARGV[5] which in-progress records: 'all', 'expired' (lease past by the Redis clock)
    ARGV[6] tool ('' for any)
    ARGV[7] olderThanMs ('' for none)
    ARGV[8] position to start after: '<15-digit updatedAtMs><key>' ('' from the start)
    ARGV[9] '1' when the position itself is included, '0' when not

  Output:
    { 15, nowMs, last examined position | false (no more entries), tenant | false,
      { key, <record> }, ... }
    { 18, nowMs }  entries of an earlier layout were converted and more are left: call again
  <record> as recordReply in includes/01-record.lua (its code and nowMs included)
]]
local indexKey = KEYS[1]
local expiryKey = KEYS[2]
local oldest = ARGV[1] == 'oldest'
local limit = tonumber(ARGV[2])
local fetch = tonumber(ARGV[3])
local letters = ARGV[4]
local expiredOnly = ARGV[5] == 'expired'
local tool = ARGV[6]
local olderThanMs = tonumber(ARGV[7])
local position = ARGV[8]
local inclusive = ARGV[9] == '1'

local now = nowMs()
local base, tag = string.match(indexKey, '^(.*):i:(%b{})$')

-- An earlier layout's listing entries have score 0 (this one's score is a time).
local LEGACY_BATCH = 200
local legacy = redis.call('ZRANGEBYSCORE', indexKey, 0, 0, 'LIMIT', 0, LEGACY_BATCH)
for _, member in ipairs(legacy) do
  local legacyKey = legacyMemberKey(member)
  if legacyKey ~= nil then
    convertLegacyEntry(indexKey, expiryKey, base, tag, member, legacyKey, now)
  else
    redis.call('ZREM', indexKey, member)
  end
end
if #legacy == LEGACY_BATCH then return { 18, now } end

local stateOfLetter = {
  i = 'indeterminate', a = 'abandoned', c = 'completed', p = 'in_progress',
  w = 'awaiting_approval', y = 'approved', n = 'denied',
}
local wanted = {}
-- States whose effect is unknown only: their own index, not every record's.
local attentionOnly = true
for index = 1, #letters do
  local state = stateOfLetter[string.sub(letters, index, index)]
  wanted[state] = true
  if not ATTENTION_STATES[state] then attentionOnly = false end
end
local attentionKey = base .. ':a:' .. tag
local sourceKey = attentionOnly and attentionKey or indexKey

-- `a` after `b` in the index's order of equal scores (bytes, as Redis orders members).
local function bytesAfter(a, b)
  for index = 1, math.min(#a, #b) do
    local x, y = string.byte(a, index), string.byte(b, index)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- The rank of the first entry after (atMs, key) in ascending order (at it when `orAt`): the
-- entries of score atMs are found by ZCOUNT, then bisected by key.
local function firstRankAfter(atMs, key, orAt)
  local score = string.format('%.0f', atMs)
  local low = redis.call('ZCOUNT', sourceKey, '-inf', '(' .. score)
  local high = low + redis.call('ZCOUNT', sourceKey, score, score)
  while low < high do
    local middle = math.floor((low + high) / 2)
    local member = redis.call('ZRANGE', sourceKey, middle, middle)[1]
    if bytesAfter(member, key) or (orAt and member == key) then high = middle else low = middle + 1 end
  end
  return low
end

local items
if oldest then
  local from = 0
  if position ~= '' then from = firstRankAfter(tonumber(string.sub(position, 1, 15)), string.sub(position, 16), inclusive) end
  items = redis.call('ZRANGE', sourceKey, from, from + fetch - 1, 'WITHSCORES')
else
  local to
  if position ~= '' then
    to = firstRankAfter(tonumber(string.sub(position, 1, 15)), string.sub(position, 16), not inclusive) - 1
  else
    to = redis.call('ZCARD', sourceKey) - 1
  end
  items = {}
  if to >= 0 then
    local ascending = redis.call('ZRANGE', sourceKey, math.max(0, to - fetch + 1), to, 'WITHSCORES')
    for index = #ascending - 1, 1, -2 do
      items[#items + 1] = ascending[index]
      items[#items + 1] = ascending[index + 1]
    end
  end
end

local named = redis.call('ZRANGEBYSCORE', expiryKey, '+inf', '+inf', 'LIMIT', 0, 1)[1]
local reply = { 15, now, false, named and string.sub(named, 3) or false }
local entries = #items / 2
local more = entries == fetch
local found = 0
local last = nil
for index = 1, entries do
  local member, score = items[2 * index - 1], tonumber(items[2 * index])
  last = string.format('%015.0f', score) .. member
  local recordKey = recordKeyOf(base, tag, member)
  local raw = redis.call('GET', recordKey)
  local state = raw and recordState(raw)
  if not raw then
    redis.call('ZREM', indexKey, member)
    redis.call('ZREM', expiryKey, 'r|' .. member)
    redis.call('ZREM', attentionKey, member)
  elseif attentionOnly and not ATTENTION_STATES[state] then
    redis.call('ZREM', attentionKey, member)
  elseif wanted[state] then
    local record = decodeRecord(raw, recordKey)
    local keep = true
    if record.state == 'in_progress' and expiredOnly and record.leaseExpiresAtMs > now then keep = false end
    if tool ~= '' and record.tool ~= tool then keep = false end
    if olderThanMs ~= nil and record.updatedAtMs > now - olderThanMs then keep = false end
    if keep then
      found = found + 1
      reply[#reply + 1] = { member, recordReply(0, now, record) }
    end
  end
  if found >= limit then
    more = more or index < entries
    break
  end
end
if last ~= nil and more then reply[3] = last end
return reply

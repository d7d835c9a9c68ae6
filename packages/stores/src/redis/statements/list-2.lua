--[[
  Operator: one page of a tenant's records by state, from the tenant's listing
  index (never a scan of the keyspace). Read-mostly: an index entry whose record is gone or has
  moved on (expired, re-claimed) is pruned here.

  Input:
    KEYS[1] listing index of the tenant (`<base>:i:{tag}`)
    KEYS[2] expiry index of the tenant (`<base>:x:{tag}`)

    ARGV[1] order: 'oldest' or 'newest'
    ARGV[2] limit (records in the page)
    ARGV[3] entries fetched per state at most (the page's scan budget)
    ARGV[4] state letters: any of 'i' indeterminate, 'a' abandoned, 'c' completed, 'p' in progress
    ARGV[5] which in-progress records: 'all', 'expired' (lease past by the Redis clock)
    ARGV[6] tool ('' for any)
    ARGV[7] olderThanMs ('' for none)
    ARGV[8] position to start after: '<15-digit updatedAtMs><key>' ('' from the start)
    ARGV[9] '1' when the position itself is included, '0' when not

  Output:
    { 15, nowMs, last examined position | false (no more entries), tenant | false,
      { key, <record> }, ... }
  <record> as recordReply in includes/01-record.lua (its code and nowMs included)
]]
local indexKey = KEYS[1]
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
local expiryKey = KEYS[2]

local candidates = {}
local bound = nil
for index = 1, #letters do
  local letter = string.sub(letters, index, index)
  local after = string.char(string.byte(letter) + 1)
  local from = nil
  if position ~= '' then from = (inclusive and '[' or '(') .. letter .. position end
  local items
  if oldest then
    items = redis.call('ZRANGEBYLEX', indexKey, from or ('[' .. letter), '(' .. after, 'LIMIT', 0, fetch)
  else
    items = redis.call('ZREVRANGEBYLEX', indexKey, from or ('(' .. after), '[' .. letter, 'LIMIT', 0, fetch)
  end
  for _, member in ipairs(items) do
    candidates[#candidates + 1] = member
  end
  if #items == fetch then
    local last = string.sub(items[#items], 2)
    if bound == nil or (oldest and last < bound) or (not oldest and last > bound) then bound = last end
  end
end
table.sort(candidates, function(a, b)
  if oldest then return string.sub(a, 2) < string.sub(b, 2) end
  return string.sub(a, 2) > string.sub(b, 2)
end)

local named = redis.call('ZRANGEBYSCORE', expiryKey, '+inf', '+inf', 'LIMIT', 0, 1)[1]
local reply = { 15, now, false, named and string.sub(named, 3) or false }
local found = 0
local last = nil
local stopped = false
for index, member in ipairs(candidates) do
  local suffix = string.sub(member, 2)
  if bound ~= nil and ((oldest and suffix > bound) or (not oldest and suffix < bound)) then
    break
  end
  last = suffix
  local recordKey = memberRecordKey(base, tag, member)
  local record = readRecord(recordKey)
  if not record or indexedMember(recordKey, record) ~= member then
    redis.call('ZREM', indexKey, member)
    redis.call('ZREM', expiryKey, member)
  else
    local keep = true
    if record.state == 'in_progress' and expiredOnly and record.leaseExpiresAtMs > now then keep = false end
    if tool ~= '' and record.tool ~= tool then keep = false end
    if olderThanMs ~= nil and record.updatedAtMs > now - olderThanMs then keep = false end
    if keep then
      found = found + 1
      reply[#reply + 1] = { string.sub(member, 17), recordReply(0, now, record) }
    end
  end
  if found >= limit then
    stopped = index < #candidates
    break
  end
end
if last ~= nil and (stopped or bound ~= nil) then reply[3] = last end
return reply

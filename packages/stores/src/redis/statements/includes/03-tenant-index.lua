--[[
  A tenant's indexes beyond one record's entry: the record an index member names, the bounded
  sweep of entries past their retention (claim), and the resolution journal of a key (resolve).
  The index layout is described in 01-record.lua.
]]

-- The record key of an index member (`<letter><15 digits><key>`).
local function memberRecordKey(base, tag, member)
  return base .. ':r:' .. tag .. ':' .. escapeKey(string.sub(member, 17))
end

-- Drops up to `count` index entries whose record passed its retention (a record
-- that was renewed meanwhile gets its new deadline instead): the indexes stay bounded by the
-- live records without any scan.
local function sweepIndex(key, now, count)
  local indexKey, expiryKey, base, tag = indexNames(key)
  local due = redis.call('ZRANGEBYSCORE', expiryKey, '-inf', now, 'LIMIT', 0, count)
  for _, member in ipairs(due) do
    local kind = string.sub(member, 1, 2)
    if kind == 'j|' then
      redis.call('ZREM', expiryKey, member)
    elseif kind ~= 't|' then
      local current = readRecord(memberRecordKey(base, tag, member))
      if current and indexedMember(memberRecordKey(base, tag, member), current) == member and current.expiresAtMs > now then
        redis.call('ZADD', expiryKey, current.expiresAtMs, member)
      else
        redis.call('ZREM', indexKey, member)
        redis.call('ZREM', expiryKey, member)
      end
    end
  end
end

-- Keeps a resolution entry in the key's journal (`<base>:j:{tag}:<key>`, a list,
-- newest first) until `expiresAtMs`; the expiry index knows the journal (`j|<key>`) for forget.
local function journalResolution(key, entry, expiresAtMs)
  local indexKey, expiryKey, base, tag, escapedKey = indexNames(key)
  local journalKey = base .. ':j:' .. tag .. ':' .. escapedKey
  redis.call('LPUSH', journalKey, entry)
  local member = 'j|' .. unescapeKey(escapedKey)
  local previous = tonumber(redis.call('ZSCORE', expiryKey, member) or '0')
  local deadline = math.max(previous, expiresAtMs)
  redis.call('PEXPIREAT', journalKey, deadline)
  redis.call('ZADD', expiryKey, deadline, member)
  keepIndexesUntil(indexKey, expiryKey, deadline, 0)
end


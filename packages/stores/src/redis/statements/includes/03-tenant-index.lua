--[[
  A tenant's indexes beyond one record's entry: the record an index member names, the bounded
  sweep of entries past their retention (claim), and the resolution journal of a key (resolve).
  The index layout is described in 01-record.lua.
]]

-- The record key of a key as index members name it.
local function recordKeyOf(base, tag, key)
  return base .. ':r:' .. tag .. ':' .. escapeKey(key)
end

-- The key a legacy member (`<state letter><15 digits><key>`, an earlier layout) names, or nil
-- when the member is not one.
local function legacyMemberKey(member)
  if string.find(member, '^[acip]%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d') == nil then return nil end
  return string.sub(member, 17)
end

-- Replaces a legacy member (the same string in both indexes) by the record's entries of this
-- layout, or drops it when the record is gone or has moved on since it was written.
local function convertLegacyEntry(indexKey, expiryKey, base, tag, member, key, now)
  redis.call('ZREM', indexKey, member)
  redis.call('ZREM', expiryKey, member)
  local recordKey = recordKeyOf(base, tag, key)
  local record = readRecord(recordKey)
  local letters = { in_progress = 'p', completed = 'c', indeterminate = 'i', abandoned = 'a' }
  if record and record.updatedAtMs ~= nil and record.expiresAtMs > now and
    member == letters[record.state] .. string.format('%015.0f', record.updatedAtMs) .. key then
    redis.call('ZADD', indexKey, record.updatedAtMs, key)
    redis.call('ZADD', expiryKey, record.expiresAtMs, 'r|' .. key)
    if ATTENTION_STATES[record.state] then
      local attentionKey = base .. ':a:' .. tag
      redis.call('ZADD', attentionKey, record.updatedAtMs, key)
      keepAttentionUntil(attentionKey, record.expiresAtMs, record.retentionMs)
    end
  end
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
    elseif kind == 'r|' then
      local entryKey = string.sub(member, 3)
      local current = readRecord(recordKeyOf(base, tag, entryKey))
      if current and current.expiresAtMs > now then
        redis.call('ZADD', expiryKey, current.expiresAtMs, member)
      else
        redis.call('ZREM', indexKey, entryKey)
        redis.call('ZREM', expiryKey, member)
        redis.call('ZREM', base .. ':a:' .. tag, entryKey)
      end
    elseif kind ~= 't|' then
      local legacyKey = legacyMemberKey(member)
      if legacyKey ~= nil then
        convertLegacyEntry(indexKey, expiryKey, base, tag, member, legacyKey, now)
      else
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


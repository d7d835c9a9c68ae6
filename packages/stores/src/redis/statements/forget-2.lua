--[[
  Erases up to ARGV[1] entries of a tenant's expiry index: the records (and their
  listing and attention entries) and resolution journals it names. Called until it reports nothing left; the
  tenant's indexes go with the last batch.

  Input:
    KEYS[1] listing index of the tenant (`<base>:i:{tag}`)
    KEYS[2] expiry index of the tenant (`<base>:x:{tag}`)

    ARGV[1] batch size

  Output:
    { 10, nowMs, records erased, entries left }
]]
local indexKey = KEYS[1]
local expiryKey = KEYS[2]
local batch = tonumber(ARGV[1])


local now = nowMs()
local base, tag = string.match(indexKey, '^(.*):i:(%b{})$')
local erased = 0
local members = redis.call('ZRANGE', expiryKey, 0, batch - 1)
for _, member in ipairs(members) do
  local kind = string.sub(member, 1, 2)
  if kind == 'j|' then
    redis.call('DEL', base .. ':j:' .. tag .. ':' .. escapeKey(string.sub(member, 3)))
    redis.call('ZREM', expiryKey, member)
  elseif kind ~= 't|' then
    -- `r|<key>`, or a member of an earlier layout (the same string in both indexes).
    local key = kind == 'r|' and string.sub(member, 3) or legacyMemberKey(member)
    if key ~= nil then
      erased = erased + redis.call('DEL', recordKeyOf(base, tag, key))
      redis.call('ZREM', indexKey, kind == 'r|' and key or member)
      redis.call('ZREM', base .. ':a:' .. tag, key)
    end
    redis.call('ZREM', expiryKey, member)
  end
end
local left = redis.call('ZCARD', expiryKey)
if left <= 1 then
  local rest = redis.call('ZRANGE', expiryKey, 0, -1)
  if #rest == 0 or string.sub(rest[1], 1, 2) == 't|' then
    redis.call('DEL', expiryKey)
    redis.call('DEL', indexKey)
    redis.call('DEL', base .. ':a:' .. tag)
    left = 0
  end
end
return { 10, now, erased, left }

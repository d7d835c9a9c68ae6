--[[
  Operator: the resolution entries of one key, newest first, while they last.
  Read-only.

  Input:
    KEYS[1] the key's resolution journal (`<base>:j:{tag}:<key>`)

  Output:
    { 15, nowMs, { action, fromState, fence, attempt, errorType|false, errorMessage|false,
                   by|false, reason|false, atMs, tool, expiresAtMs[, forced] }, ... }
]]
local journalKey = KEYS[1]


local now = nowMs()
local reply = { 15, now }
for _, packed in ipairs(redis.call('LRANGE', journalKey, 0, -1)) do
  local entry = { cmsgpack.unpack(packed) }
  if entry[11] > now then reply[#reply + 1] = entry end
end
return reply

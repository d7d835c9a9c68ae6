--[[
  Reads a record together with the Redis clock (waiters judge the lease deadline by it).
  Read-only.

  Input:
    KEYS[1] record key

  Output:
    { 15, nowMs, <record> }  found
    { 11, nowMs }  not found (released or past retention)
  <record> as in claim-1.lua
]]
local key = KEYS[1]


local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
return recordReply(15, now, record)

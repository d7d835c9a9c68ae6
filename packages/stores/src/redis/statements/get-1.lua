--[[
  Reads a record (RedisStore.get). Read-only, and no clock: the record is all get answers
  (waiters read through watch-1.lua, which reads the clock they judge the lease by).

  Input:
    KEYS[1] record key

  Output:
    { 15, 0, <record> }  found
    { 11, 0 }  not found (released or past retention)
  <record> as in claim-1.lua
]]
local key = KEYS[1]

local record = readRecord(key)

if not record then
  return { 11, 0 }
end
return recordReply(15, 0, record)

--[[
  Drops the claim of the current holder (a failed idempotent attempt, or an effectful one that
  declared it had no effect): the record is deleted and the key is free again.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] settle channel

  Output:
    { 10, nowMs }  released
    { 11, nowMs }  not found (released or past retention)
    { 12, nowMs, <record> }  stale: another attempt holds the record
    { 13, nowMs, <record> }  the record is no longer in progress: nothing changed
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local channel = ARGV[3]

--- @include "record"

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.fence ~= fence or record.owner ~= owner then
  return recordReply(12, now, record)
end
if record.state ~= 'in_progress' then
  return recordReply(13, now, record)
end

deleteRecord(key, record) -- [#20 listing] with its index entries
announceSettled(channel, 'released')
return { 10, now }

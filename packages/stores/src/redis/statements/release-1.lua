--[[
  Drops the claim of the current holder (a failed idempotent attempt, or an effectful one that
  declared it had no effect): the record is deleted with its index entries and the key is free
  again.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] settle channel

  Output:
    { 10, nowMs }  released
    { 11, nowMs } | { 12, nowMs, <record> }  not found | stale (readAsHolder, includes/02-holder-writes.lua)
    { 13, nowMs, <record> }  settled already (completed, indeterminate, abandoned): not released
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local channel = ARGV[3]

local now, record, refused = readAsHolder(key, fence, owner, true)
if refused then return refused end
if record.state ~= 'in_progress' then
  return recordReply(13, now, record)
end

deleteRecord(key, record, channel)
return { 10, now }

--[[
  Keeps the claim of the current holder as `indeterminate`: its effect may have happened and
  nobody can say. Retention restarts.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] error type
    ARGV[4] error message
    ARGV[5] retentionMs (> 0)
    ARGV[6] settle channel

  Output:
    { 10, nowMs }  marked (also when this holder already marked it with this very error: a
                   resent command whose first reply was lost)
    { 11, nowMs } | { 12, nowMs, <record> }  not found | stale (readAsHolder, includes/02-holder-writes.lua)
    { 13, nowMs, <record> }  the record is no longer in progress: nothing changed
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local errorType, errorMessage = ARGV[3], ARGV[4]
local retentionMs = tonumber(ARGV[5])
local channel = ARGV[6]

checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

local now, record, refused = readAsHolder(key, fence, owner, true)
if refused then return refused end
if record.state == 'indeterminate' and record.errorType == errorType and record.errorMessage == errorMessage then
  return { 10, now }
end
if record.state ~= 'in_progress' then
  return recordReply(13, now, record)
end

record.errorType = errorType
record.errorMessage = errorMessage
settleRecord(key, record, 'indeterminate', now, retentionMs, channel)
return { 10, now }

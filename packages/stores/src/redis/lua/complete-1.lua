--[[
  Records the outcome of the current holder. Retention restarts.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] outcome (any bytes)
    ARGV[4] retentionMs (> 0)
    ARGV[5] settle channel

  Output:
    { 10, nowMs }  completed (also when this holder already completed with this very outcome:
                   a resent command whose first reply was lost)
    { 11, nowMs }  not found (released or past retention)
    { 12, nowMs, <record> }  stale: another attempt holds the record
    { 13, nowMs, <record> }  the record is already completed with another outcome: nothing changed
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local outcome = ARGV[3]
local retentionMs = tonumber(ARGV[4])
local channel = ARGV[5]

--- @include "record"
checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.fence ~= fence or record.owner ~= owner then
  return recordReply(12, now, record)
end
-- An attempt whose outcome was marked unknown (indeterminate, abandoned) may still state it.
if record.state == 'completed' then
  if record.outcome == outcome then
    return { 10, now }
  end
  return recordReply(13, now, record)
end

record.state = 'completed'
record.outcome = outcome
record.errorType = nil
record.errorMessage = nil
record.retentionMs = retentionMs
record.expiresAtMs = now + retentionMs
record.updatedAtMs = now -- [#20 listing]
writeRecord(key, record)
announceSettled(channel, 'completed')
return { 10, now }

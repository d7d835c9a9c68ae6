--[[
  Operator: settles an `indeterminate` or `abandoned` record, as completed with an outcome
  (retention restarts) or as released (deleted).

  Input:
    KEYS[1] record key

    ARGV[1] resolution: 'outcome' or 'released'
    ARGV[2] outcome (any bytes; ignored for 'released')
    ARGV[3] retentionMs (> 0)
    ARGV[4] settle channel

  Output:
    { 10, nowMs }  resolved
    { 11, nowMs }  not found (released or past retention)
    { 14, nowMs, <record> }  not resolvable: the record is in progress or completed
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local resolution = ARGV[1]
local outcome = ARGV[2]
local retentionMs = tonumber(ARGV[3])
local channel = ARGV[4]

if resolution == 'outcome' then
  checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)
end

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.state ~= 'indeterminate' and record.state ~= 'abandoned' then
  return recordReply(14, now, record)
end

if resolution == 'released' then
  deleteRecord(key, channel)
  return { 10, now }
end

completeRecord(key, record, outcome, now, retentionMs, channel)
return { 10, now }

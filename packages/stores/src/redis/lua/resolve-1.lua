--[[
  Operator: settles an `indeterminate` or `abandoned` record, as completed with an outcome
  (retention restarts) or as released (deleted).

  Input:
    KEYS[1] record key

    ARGV[1] resolution: 'outcome' or 'released'
    ARGV[2] outcome (any bytes; ignored for 'released')
    ARGV[3] retentionMs (> 0)
    ARGV[4] settle channel
    ARGV[5] by, ARGV[6] reason ('' when absent) [#20 listing]

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
local by, reason = ARGV[5], ARGV[6] -- [#20 listing]

--- @include "record"
checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.state ~= 'indeterminate' and record.state ~= 'abandoned' then
  return recordReply(14, now, record)
end

-- [#20 listing] the resolution entry, in the record (completed) and in the key's journal
local entry = cmsgpack.pack(resolution == 'released' and 'released' or 'completed', record.state,
  record.fence, record.attempt, record.errorType or false, record.errorMessage or false,
  by ~= '' and by or false, reason ~= '' and reason or false, now, record.tool, now + retentionMs)
journalResolution(key, entry, now + retentionMs)

if resolution == 'released' then
  deleteRecord(key, record) -- [#20 listing] with its index entries
  announceSettled(channel, 'released')
  return { 10, now }
end

record.state = 'completed'
record.outcome = outcome
record.errorType = nil
record.errorMessage = nil
record.retentionMs = retentionMs
record.expiresAtMs = now + retentionMs
record.updatedAtMs = now -- [#20 listing]
record.resolution = entry
writeRecord(key, record)
announceSettled(channel, 'completed')
return { 10, now }

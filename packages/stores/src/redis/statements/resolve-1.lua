--[[
  Operator: settles an `indeterminate` or `abandoned` record, or an `in_progress` one whose lease
  expired by this clock (its holder is gone) or, forced, is live, as completed with an outcome
  (retention restarts) or as released (deleted, with its index entries). The resolution entry is
  kept in the record (completed) and in the key's journal (both), in the same step.
  An entry is packed as: action, fromState, fence, attempt, errorType|false, errorMessage|false,
  by|false, reason|false, atMs, tool, expiresAtMs, forced (resolutions-1.lua reads it back;
  entries written before `forced` existed have 11 fields).

  Input:
    KEYS[1] record key

    ARGV[1] resolution: 'outcome' or 'released'
    ARGV[2] outcome (any bytes; ignored for 'released')
    ARGV[3] retentionMs (> 0)
    ARGV[4] settle channel
    ARGV[5] by, ARGV[6] reason ('' when absent)
    ARGV[7] expected fence, ARGV[8] expected owner: the holder the operator saw ('' when absent:
            any holder)
    ARGV[9] '1' to settle even a live holder (forced, with a reason), else ''

  Output:
    { 10, nowMs }  resolved
    { 11, nowMs }  not found (released or past retention)
    { 16, nowMs, <record> }  changed: another holder than the expected one (another attempt, or
                             another life of the key); nothing changed
    { 14, nowMs, <record> }  not resolvable: the record is completed
    { 17, nowMs, <record> }  holder alive: in progress under a live lease, not forced; nothing
                             changed (its body may still take effect)
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local resolution = ARGV[1]
local outcome = ARGV[2]
local retentionMs = tonumber(ARGV[3])
local channel = ARGV[4]
local by, reason = ARGV[5], ARGV[6]
local expectFence, expectOwner = ARGV[7], ARGV[8]
local force = ARGV[9] == '1'

-- Also for 'released': the journal keeps the entry for retentionMs.
checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if expectFence ~= '' and (record.fence ~= tonumber(expectFence) or record.owner ~= expectOwner) then
  return recordReply(16, now, record)
end
-- A record before its claim is decided with decide-1.lua, never resolved.
if record.state == 'completed' or APPROVAL_STATES[record.state] then
  return recordReply(14, now, record)
end
-- A holder whose lease is live may still take effect: never settled unasked.
local forced = record.state == 'in_progress' and record.leaseExpiresAtMs > now
if forced and not force then
  return recordReply(17, now, record)
end

local entry = cmsgpack.pack(resolution == 'released' and 'released' or 'completed', record.state,
  record.fence, record.attempt, record.errorType or false, record.errorMessage or false,
  by ~= '' and by or false, reason ~= '' and reason or false, now, record.tool, now + retentionMs, forced)
journalResolution(key, entry, now + retentionMs)

if resolution == 'released' then
  deleteRecord(key, record, channel)
  return { 10, now }
end

record.resolution = entry
completeRecord(key, record, outcome, now, retentionMs, channel)
return { 10, now }

--[[
  Records the outcome of the current holder. Retention restarts.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] outcome (any bytes)
    ARGV[4] retentionMs (> 0)
    ARGV[5] settle channel
    ARGV[6] sweep budget (optional, '0' when absent): after completing, also drop up to this many
            entries of the tenant's expiry index whose record passed its retention (the store asks
            for 64 on one complete in 16 when it claims natively: no claim script runs to sweep)

  Output:
    { 10, nowMs }  completed (also when this holder already completed with this very outcome:
                   a resent command whose first reply was lost)
    { 11, nowMs } | { 12, nowMs, <record> }  not found | stale (readAsHolder, includes/02-holder-writes.lua)
    { 13, nowMs, <record> }  the record is already completed with another outcome: nothing changed
  <record> as in claim-1.lua
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local outcome = ARGV[3]
local retentionMs = tonumber(ARGV[4])
local channel = ARGV[5]

checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

-- Only the holder states the outcome; an attempt whose outcome was marked unknown
-- (indeterminate, abandoned) may still state it.
local now, record, refused = readAsHolder(key, fence, owner, true)
if refused then return refused end
if record.state == 'completed' then
  if record.outcome == outcome then
    return { 10, now }
  end
  return recordReply(13, now, record)
end

completeRecord(key, record, outcome, now, retentionMs, channel)
local sweepBudget = math.floor(math.min(tonumber(ARGV[6]) or 0, 1000))
if sweepBudget < 1 then return { 10, now } end

--- @helpers-below: the sweep's helpers (most completes never define them)

sweepIndex(key, now, sweepBudget)
return { 10, now }

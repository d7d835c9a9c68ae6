--[[
  Extends the lease of the current holder.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] leaseMs (> 0)

  Output:
    { 10, nowMs, leaseExpiresAtMs }  renewed
    { 11, nowMs }  not found (released or past retention)
    { 12, nowMs }  stale: another attempt holds the record
    { 13, nowMs }  settled: the holder is current but the record is no longer in progress
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local leaseMs = tonumber(ARGV[3])

--- @include "record"
checkDuration('leaseMs', leaseMs, MAX_LEASE_MS)

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.fence ~= fence or record.owner ~= owner then
  return { 12, now }
end
if record.state ~= 'in_progress' then
  return { 13, now }
end

record.leaseExpiresAtMs = now + leaseMs
record.expiresAtMs = math.max(record.expiresAtMs, record.leaseExpiresAtMs + record.retentionMs)
writeRecord(key, record)
return { 10, now, record.leaseExpiresAtMs }

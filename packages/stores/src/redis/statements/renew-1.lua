--[[
  Extends the lease of the current holder.

  Input:
    KEYS[1] record key

    ARGV[1] fence of the holder
    ARGV[2] owner of the holder
    ARGV[3] leaseMs (> 0)

  Output:
    { 10, nowMs, leaseExpiresAtMs }  renewed
    { 11, nowMs } | { 12, nowMs }  not found | stale (readAsHolder, includes/02-holder-writes.lua)
    { 13, nowMs }  settled: the holder is current but the record is no longer in progress
]]
local key = KEYS[1]
local fence = tonumber(ARGV[1])
local owner = ARGV[2]
local leaseMs = tonumber(ARGV[3])

checkDuration('leaseMs', leaseMs, MAX_LEASE_MS)

local now, record, refused = readAsHolder(key, fence, owner, false)
if refused then return refused end
if record.state ~= 'in_progress' then
  return { 13, now }
end

extendLease(key, record, now + leaseMs)
return { 10, now, record.leaseExpiresAtMs }

--[[
  The holder check and the write-backs that several scripts share (each keeps the record's index
  entry through writeRecord / unindexRecord, 01-record.lua).
]]

-- The reply to an operation of the holder `fence`/`owner` when it does not hold the record, or nil
-- when it does: { 11, now } no record (released or past retention), { 12, now[, <record>] }
-- another attempt holds it (with the record when `withRecord`).
local function refuseNonHolder(record, fence, owner, now, withRecord)
  if not record then
    return { 11, now }
  end
  if record.fence == fence and record.owner == owner then
    return nil
  end
  if withRecord then
    return recordReply(12, now, record)
  end
  return { 12, now }
end

-- Reads the clock and the record for an operation of the holder `fence`/`owner`: now, the record,
-- and the reply to send instead when they do not hold it (see refuseNonHolder; nil when they do).
local function readAsHolder(key, fence, owner, withRecord)
  local now = nowMs()
  local record = readRecord(key)
  return now, record, refuseNonHolder(record, fence, owner, now, withRecord)
end

-- Moves the lease deadline to `leaseExpiresAtMs`, keeps the record at least one retention window
-- past it, and writes it back.
local function extendLease(key, record, leaseExpiresAtMs)
  record.leaseExpiresAtMs = leaseExpiresAtMs
  record.expiresAtMs = math.max(record.expiresAtMs, leaseExpiresAtMs + record.retentionMs)
  writeRecord(key, record)
end

-- Leaves `in_progress` for `state`: retention restarts at `now` (also the record's updatedAtMs,
-- which moves its index entry), the waiters are told and the record is written back.
local function settleRecord(key, record, state, now, retentionMs, channel)
  record.state = state
  record.retentionMs = retentionMs
  record.expiresAtMs = now + retentionMs
  record.updatedAtMs = now
  announceSettled(channel, state, record)
  writeRecord(key, record)
end

-- Settles the record as completed with `outcome` (any error it carried is dropped).
local function completeRecord(key, record, outcome, now, retentionMs, channel)
  record.outcome = outcome
  record.errorType = nil
  record.errorMessage = nil
  settleRecord(key, record, 'completed', now, retentionMs, channel)
end

-- Deletes the record with its index entries (the key is free again) and tells the waiters.
local function deleteRecord(key, record, channel)
  redis.call('DEL', key)
  unindexRecord(key, record)
  announceSettled(channel, 'released', record)
end

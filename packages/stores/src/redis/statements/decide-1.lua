--[[
  Operator: records a decision on one call that needs an approval, in one atomic step
  (RedisStore.decideApproval; docs/store-contract.md in @toolfence/core, "Approvals").

  Input:
    KEYS[1] record key

    ARGV[1] approved: '1' approve, '0' deny
    ARGV[2] tool
    ARGV[3] fingerprint
    ARGV[4] by ('' when absent)
    ARGV[5] reason ('' when absent)
    ARGV[6] expect: '1' when the decision is for the request of ARGV[7] only
    ARGV[7] the expected request's owner
    ARGV[8] retentionMs (> 0)
    ARGV[9] tenant, ARGV[10] runId, ARGV[11] callId, ARGV[12] description, ARGV[13] codec
            ('' when absent): kept only when the decision creates the record

  Checked in this order; the first that applies answers.

  Output:
    { 11, nowMs }  not_found: no live record and an expectation given
    { 6, nowMs, <record> }  conflict: another tool or fingerprint
    { 22, nowMs, <record> }  consumed: the key was claimed (in_progress or settled)
    { 16, nowMs, <record> }  changed: the record's owner is not the expected one
    { 23, nowMs, <record> }  denied: an approval found a denial, which stands
    { 10, nowMs, <record> }  decided: created, written, or the same decision already there
]]
local key = KEYS[1]
local approved = ARGV[1] == '1'
local tool = ARGV[2]
local fingerprint = ARGV[3]
local expect = ARGV[6] == '1'
local expectedOwner = ARGV[7]
local retentionMs = tonumber(ARGV[8])
local tenant = ARGV[9]

checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)

local function given(value) if value == nil or value == '' then return nil end return value end

local now = nowMs()
local record = readRecord(key)
local decided = approved and 'approved' or 'denied'
-- The audit, as the record keeps it: approved (1|0), by, reason, atMs.
local entry = cmsgpack.pack(approved and 1 or 0, given(ARGV[4]), given(ARGV[5]), now)

if not record then
  if expect then return { 11, now } end
  -- Decided before the call asked: the request has no owner yet.
  local created = {
    state = decided, fence = 0, attempt = 0, owner = '',
    leaseExpiresAtMs = 0, expiresAtMs = now + retentionMs, retentionMs = retentionMs,
    tool = tool, fingerprint = fingerprint,
    runId = given(ARGV[10]), callId = given(ARGV[11]), description = given(ARGV[12]),
    codec = given(ARGV[13]), updatedAtMs = now, approval = entry,
  }
  writeRecord(key, created, tenant)
  return recordReply(10, now, created)
end
if record.tool ~= tool or record.fingerprint ~= fingerprint then return recordReply(6, now, record) end
if not APPROVAL_STATES[record.state] then return recordReply(22, now, record) end
if expect and record.owner ~= expectedOwner then return recordReply(16, now, record) end
if record.state == 'denied' then
  -- A denial stays a denial; the first denial's audit stays.
  return recordReply(approved and 23 or 10, now, record)
end
if record.state == 'approved' and approved then return recordReply(10, now, record) end
-- awaiting_approval decided, or an approval revoked before use.
record.state = decided
record.approval = entry
record.updatedAtMs = now
record.expiresAtMs = now + retentionMs
record.retentionMs = retentionMs
writeRecord(key, record)
return recordReply(10, now, record)

--[[
  Claims an idempotency key, or reports who holds it, in one atomic step.

  Input:
    KEYS[1] record key

    ARGV[1] tool
    ARGV[2] fingerprint
    ARGV[3] owner (unique per attempt; a claim carrying the owner of the current in-progress
            attempt is that attempt's own claim, resent by the client after a lost reply)
    ARGV[4] leaseMs (> 0)
    ARGV[5] retentionMs (> 0)
    ARGV[6] takeover mode: '1' at-least-once, '0' at-most-once
    ARGV[7] maxAttempts (>= 1)
    ARGV[8] checkFingerprint: '1' or '0'
    ARGV[9] settle channel (published to when the claim settles an expired record)
    ARGV[10] tenant, ARGV[11] runId, ARGV[12] callId, ARGV[13] description ('' when absent):
             kept for operators
    ARGV[14] sweep budget: when this claim makes a new record, it also drops up to this many
             entries of the tenant's expiry index whose record passed its retention ('0': none;
             the store asks for 64 on one claim in 16, so the sweep is off most claims' path)
    ARGV[15] codec: the name of the guard's codec ('' when absent), kept with a new record
    ARGV[16] approval: '1' when the call needs an operator's approval (ClaimOptions.approval
             'required'): no live record → awaiting_approval is written, and the fingerprint is
             always compared

  Output:
    { 1, nowMs, fence, attempt, leaseExpiresAtMs, takeover (0|1) }  acquired (also for a resent
                                                                     claim of the current attempt)
    { 20, 0, <record string> }  found settled (completed, indeterminate, abandoned) or before its
                                claim and not approved (awaiting_approval, denied): the record
                                as stored, judged by the client (a conflict, or its state)
    { 21, nowMs, <record> }  approval_required: awaiting_approval written now (no live record)
    { 3, nowMs, <record> }  busy (live lease held by another attempt)
    { 4, nowMs, <record> }  indeterminate (marked so now: expired at-most-once lease)
    { 5, nowMs, <record> }  abandoned (marked so now: maxAttempts lost)
    { 6, 0, <record> }  conflict (an in-progress record of another tool, or another fingerprint
                        when checked)
  <record> = state, fence, attempt, owner, leaseExpiresAtMs, expiresAtMs, tool, fingerprint,
             outcome, errorType, errorMessage, then the operator fields (recordReply,
             includes/01-record.lua)
  The clock (TIME, about a quarter of a repeat's cost) is read only where a decision needs it: a
  record found settled, or a conflict, is answered as found, with 0 for nowMs. A settled record
  needs no clock to be live: Redis expires it at its retention deadline. Code 2 (completed) is
  no longer sent: a found record comes as code 20.

  An `approved` record (decide-1.lua) is consumed HERE, in the step that read it: of any number of
  claims racing on one approval, the first script makes it this claim's in_progress life (fence 1,
  attempt 1, the approval entry kept) and every later one finds that record (busy, a repeat). The
  native claim never decides on it: it hands such a record to this script (native-claim.ts).
]]
local key = KEYS[1]
local tool = ARGV[1]
local fingerprint = ARGV[2]
local owner = ARGV[3]
local leaseMs = tonumber(ARGV[4])
local retentionMs = tonumber(ARGV[5])
local atLeastOnce = ARGV[6] == '1'
local maxAttempts = tonumber(ARGV[7])
local checkFingerprint = ARGV[8] == '1'
local channel = ARGV[9]
local tenant = ARGV[10]
local approvalRequired = ARGV[16] == '1'

checkDuration('leaseMs', leaseMs, MAX_LEASE_MS)
checkDuration('retentionMs', retentionMs, MAX_RETENTION_MS)
checkDuration('maxAttempts', maxAttempts, 1000)

local raw = redis.call('GET', key)

-- A record found settled is answered as it is stored (a repeat): the client decodes it and judges
-- a conflict (codes.ts, settledClaimResult), so nothing below runs and nothing is unpacked here.
local foundState = raw and recordState(raw)
if raw and foundState ~= 'in_progress' and foundState ~= 'approved' then
  return { 20, 0, raw }
end
local record = raw and decodeRecord(raw, key)
-- An approval binds the arguments, whatever checkFingerprint says.
local bindsArguments = checkFingerprint or approvalRequired or foundState == 'approved'
if record and (record.tool ~= tool or (bindsArguments and record.fingerprint ~= fingerprint)) then
  return recordReply(6, 0, record)
end

--- @helpers-below: the helpers only the rest of the script uses (a repeat never defines them)

local function given(value) if value == nil or value == '' then return nil end return value end
local callInfo = { runId = given(ARGV[11]), callId = given(ARGV[12]), description = given(ARGV[13]) }
local sweepBudget = math.floor(math.min(tonumber(ARGV[14]) or 0, 1000))

if not record and approvalRequired then
  -- Nothing runs: the request waits for an operator's decision (fence 0: no attempt yet).
  local now = nowMs()
  local asked = {
    state = 'awaiting_approval', fence = 0, attempt = 0, owner = owner,
    leaseExpiresAtMs = 0, expiresAtMs = now + retentionMs, retentionMs = retentionMs,
    tool = tool, fingerprint = fingerprint,
    runId = callInfo.runId, callId = callInfo.callId, description = callInfo.description,
    codec = given(ARGV[15]), updatedAtMs = now,
  }
  writeRecord(key, asked, tenant)
  return recordReply(21, now, asked)
end

if record and record.state == 'approved' then
  -- Consumed in this step: the record becomes this claim's life, the approval entry kept.
  local now = nowMs()
  record.state = 'in_progress'
  record.fence, record.attempt, record.owner = 1, 1, owner
  record.retentionMs = retentionMs
  record.runId, record.callId, record.description = callInfo.runId, callInfo.callId, callInfo.description
  record.codec = given(ARGV[15])
  record.claimedAtMs, record.updatedAtMs = now, now
  record.leaseExpiresAtMs = now + leaseMs
  record.expiresAtMs = record.leaseExpiresAtMs + retentionMs
  writeRecord(key, record)
  return { 1, now, 1, 1, record.leaseExpiresAtMs, 0 }
end

if not record then
  local now = nowMs()
  local leaseExpiresAtMs = now + leaseMs
  writeRecord(key, {
    state = 'in_progress',
    fence = 1,
    attempt = 1,
    owner = owner,
    leaseExpiresAtMs = leaseExpiresAtMs,
    -- Never kept forever: an abandoned claim is gone one retention window after its lease.
    expiresAtMs = leaseExpiresAtMs + retentionMs,
    retentionMs = retentionMs,
    tool = tool,
    fingerprint = fingerprint,
    runId = callInfo.runId, callId = callInfo.callId, description = callInfo.description,
    codec = given(ARGV[15]),
    claimedAtMs = now,
    updatedAtMs = now,
  }, tenant)
  if sweepBudget >= 1 then sweepIndex(key, now, sweepBudget) end
  return { 1, now, 1, 1, leaseExpiresAtMs, 0 }
end

-- ioredis resends a command whose reply was lost with its connection: the attempt that owns the
-- record is asking again, not a second claimer. Answer as the first run did (the lease restarts:
-- the claimer never got the first answer, so it has not started yet).
if record.state == 'in_progress' and record.owner == owner then
  local now = nowMs()
  extendLease(key, record, math.max(record.leaseExpiresAtMs, now + leaseMs))
  -- Fence 1 is always a fresh claim; every takeover raises it.
  return { 1, now, record.fence, record.attempt, record.leaseExpiresAtMs, record.fence > 1 and 1 or 0 }
end

local now = nowMs()
if record.leaseExpiresAtMs > now then
  return recordReply(3, now, record)
end

-- in_progress with an expired lease: the holder died or stalled.
if atLeastOnce and record.attempt < maxAttempts then
  record.fence = record.fence + 1
  record.attempt = record.attempt + 1
  record.owner = owner
  record.retentionMs = retentionMs
  record.runId, record.callId, record.description = callInfo.runId, callInfo.callId, callInfo.description
  record.claimedAtMs, record.updatedAtMs = now, now
  extendLease(key, record, now + leaseMs)
  return { 1, now, record.fence, record.attempt, record.leaseExpiresAtMs, 1 }
end

record.errorType = 'LeaseExpired'
if atLeastOnce then
  record.errorMessage = 'the lease of attempt ' .. record.attempt .. ' expired and ' .. maxAttempts ..
    ' attempt(s) were lost'
  settleRecord(key, record, 'abandoned', now, retentionMs, channel)
  return recordReply(5, now, record)
end
record.errorMessage = 'the lease of attempt ' .. record.attempt ..
  ' expired before its outcome was recorded; the effect may have happened'
settleRecord(key, record, 'indeterminate', now, retentionMs, channel)
return recordReply(4, now, record)

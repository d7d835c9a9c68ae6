--[[
  Shared helpers: the store's loader (../../statements.ts, ../../lua-includes.ts) puts before each
  script the top-level definitions of includes/*.lua it uses, directly or through another helper,
  in file-name order and then in the order of each file, so a helper may use the helpers defined
  before it (in its file or the files before it). Every definition starts at column 0 with
  `local function <name>` or `local <name> =`, its comment lines right above it; a script pays per
  call only for the helpers it carries.

  A record is ONE Redis string holding a MessagePack sequence, in this order:
    state, fence, attempt, owner, leaseExpiresAtMs, expiresAtMs, retentionMs,
    tool, fingerprint, outcome, errorType, errorMessage,
    runId, callId, description, claimedAtMs, updatedAtMs, resolution (a packed entry, see
    resolve-1.lua), waited (true while an in-progress record has a waiter, see watch-1.lua),
    codec, then (only on a record of a call that needed an approval: two nils where a native
    claim's leaseMs and tenant go) the operator's approval entry, itself a packed string of
    approved (1 or 0), by, reason, atMs (see decide-1.lua)
  (absent values are MessagePack nil). A record before its claim (awaiting_approval, approved,
  denied) has fence 0 and attempt 0, so no holder's write (fence >= 1) matches it. A record the store claimed natively (Redis >= 7: `SET k
  <record> NX PX <lease + retention> GET`, no script, so no clock in the value) has no
  leaseExpiresAtMs, expiresAtMs, claimedAtMs or updatedAtMs, and two more values: leaseMs and the
  tenant. Its deadlines are its key's expiry (PEXPIRETIME) and that minus its retention, and it
  has no index entry yet: the first script that writes it (renew, complete, a takeover, list's
  indexing pass) writes both (decodeRecord, writeRecord). The string is smaller than a hash of the same fields
  (a 100-byte outcome pushes a hash out of its listpack encoding) and MessagePack is
  binary-safe, so outcomes round-trip byte for byte.

  Every record of a tenant shares the tenant's hash tag, with the tenant's listing index
  (`<base>:i:{tag}`, member the record's key, scored by its updatedAtMs: ordered by time, then
  key) and its expiry index (`<base>:x:{tag}`, member `r|<key>` scored by the record's retention
  deadline, plus `t|<tenant>` and the journals' `j|<key>`). Neither member names the state, so a
  settlement moves two scores and no member; `list` reads the state from each record. The
  records whose effect is unknown (indeterminate, abandoned) are also in the tenant's attention
  index (`<base>:a:{tag}`, scored like the listing index), written only by the rare paths that
  enter or leave those states.
  writeRecord and deleteRecord (02-holder-writes.lua) keep both in the same script as the
  record; the names are derived from the record key, so they are in its slot. Entries an earlier
  layout wrote (`<state letter><15-digit updatedAtMs><key>`, listing score 0) are converted by
  list and the sweep (convertLegacyEntry, 03-tenant-index.lua).

  All times are epoch milliseconds on the Redis server's clock.
]]
-- Longest lease (the longest Node.js timer) and retention (10 years), as in @toolfence/core's
-- store-input.ts. The store checks them before it calls a script; the script checks again, so
-- that no caller (another version, a hand-made EVALSHA) can write a deadline that is not an
-- exact integer below 2^53 and then can no longer be decoded (rule S4).
local MAX_LEASE_MS = 2147483647
local MAX_RETENTION_MS = 315360000000
-- Ceiling of any deadline a script reads or writes: 2^52 - 1 (year ~144,000). A double holds every
-- integer up to 2^53 exactly, but ioredis' RESP decoder computes `n * 10 + byte - 48` in doubles
-- and so misreads integers within about 48 of 2^53 (9007199254740991 arrives as ...992): stay a
-- factor of two below that edge. A bounded store never comes near it (now + 10 years + 2^31 ms).
local MAX_EXACT_MS = 4503599627370495

local function checkDuration(name, value, maxMs)
  if type(value) ~= 'number' or value ~= math.floor(value) or value < 1 or value > maxMs then
    error({ err = 'TOOLFENCE_INPUT ' .. name .. ' must be a whole number of milliseconds in 1..' ..
      string.format('%.0f', maxMs) })
  end
end

-- The Redis clock, read once per script call (every write reads it before writing; the index
-- expiry below reuses it without another TIME).
local scriptNowMs = nil
local function nowMs()
  if scriptNowMs == nil then
    local time = redis.call('TIME')
    scriptNowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return scriptNowMs
end

-- The names of a record's tenant indexes.
local indexNamesOf = {}
local function indexNames(key)
  local names = indexNamesOf[key]
  if names == nil then
    -- The prefix holds no brace, so the first '{' opens the tenant's hash tag.
    local open = string.find(key, ':r:{', 1, true)
    local close = string.find(key, '}:', open + 4, true)
    local base, tag = string.sub(key, 1, open - 1), string.sub(key, open + 3, close)
    names = { base .. ':i:' .. tag, base .. ':x:' .. tag, base, tag, string.sub(key, close + 2), base .. ':a:' .. tag }
    indexNamesOf[key] = names
  end
  return names[1], names[2], names[3], names[4], names[5], names[6]
end

-- A tenant's two indexes expire with the latest deadline they index, plus a slack (the record's
-- retention, at most an hour) so that a busy tenant extends them about once per slack rather
-- than on every write: a tenant that goes quiet leaves no index behind once its records'
-- retention has passed, and every live entry keeps its index (the expiry is only ever moved
-- later).
local INDEX_EXPIRY_SLACK_MS = 3600000

local function keepIndexesUntil(indexKey, expiryKey, deadlineMs, slackMs)
  local neededMs = deadlineMs - nowMs()
  local expiryTtl = redis.call('PTTL', expiryKey)
  local indexTtl = redis.call('PTTL', indexKey)
  -- -1: no expiry (an index written before this version, or created again after it emptied);
  -- -2: no such key (the listing index of a tenant that only has journals left).
  if (expiryTtl == -2 or expiryTtl >= neededMs) and (indexTtl == -2 or indexTtl >= neededMs) then return end
  if expiryTtl == -1 or indexTtl == -1 then
    -- No expiry yet: the index may name older records with later deadlines (its scores).
    local latest = redis.call('ZREVRANGEBYSCORE', expiryKey, '(inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if latest[2] ~= nil then deadlineMs = math.max(deadlineMs, tonumber(latest[2])) end
  end
  local at = math.min(deadlineMs + math.min(slackMs, INDEX_EXPIRY_SLACK_MS), MAX_EXACT_MS)
  if expiryTtl ~= -2 and expiryTtl < neededMs then redis.call('PEXPIREAT', expiryKey, at) end
  if indexTtl ~= -2 and indexTtl < neededMs then redis.call('PEXPIREAT', indexKey, at) end
end

local function escapeKey(key)
  return (string.gsub(key, '[^0-9A-Za-z_.-]', function(c) return string.format('%%%02X', string.byte(c)) end))
end

local function unescapeKey(escaped)
  return (string.gsub(escaped, '%%(%x%x)', function(hex) return string.char(tonumber(hex, 16)) end))
end

-- The record's key as its index members name it (unescaped), computed once per script.
local memberKeyOf = {}
local function memberKey(key)
  local member = memberKeyOf[key]
  if member == nil then
    local _, _, _, _, escapedKey = indexNames(key)
    member = unescapeKey(escapedKey)
    memberKeyOf[key] = member
  end
  return member
end

-- The states an operator looks for (nobody knows whether the effect happened): their records are
-- also in the tenant's attention index, so listing them does not read every record. Only the
-- rare paths (markIndeterminate, a lapsed lease, resolve) write it.
local ATTENTION_STATES = { indeterminate = true, abandoned = true }

-- The states of a life before its claim, for a call that needs an approval (decide-1.lua).
local APPROVAL_STATES = { awaiting_approval = true, approved = true, denied = true }

-- Keeps the attention index until `deadlineMs` plus a slack, as keepIndexesUntil does.
local function keepAttentionUntil(attentionKey, deadlineMs, slackMs)
  local ttl = redis.call('PTTL', attentionKey)
  if ttl ~= -2 and ttl < deadlineMs - nowMs() then
    redis.call('PEXPIREAT', attentionKey, math.min(deadlineMs + math.min(slackMs, INDEX_EXPIRY_SLACK_MS), MAX_EXACT_MS))
  end
end

-- Keeps the record's index entries with its updatedAtMs (listing score) and retention deadline
-- (expiry score), writing only what moved: a complete moves two scores. The tenant's indexes
-- are extended only when the deadline moves later (an earlier one is already covered).
-- `tenant` (a new record's claim) also names the tenant in its expiry index (`t|<tenant>`, score
-- +inf, for listings of every tenant), in the same ZADD: re-adding it changes nothing.
local function indexRecord(key, record, tenant)
  local indexKey, expiryKey = indexNames(key)
  local member = memberKey(key)
  if record.updatedAtMs ~= nil and record.updatedAtMs ~= record.indexedAtMs then
    redis.call('ZADD', indexKey, record.updatedAtMs, member)
  end
  if tenant ~= nil then
    redis.call('ZADD', expiryKey, record.expiresAtMs, 'r|' .. member, 'inf', 't|' .. tenant)
  elseif record.expiresAtMs ~= record.indexedExpiresAtMs then
    redis.call('ZADD', expiryKey, record.expiresAtMs, 'r|' .. member)
  end
  if record.indexedExpiresAtMs == nil or record.expiresAtMs > record.indexedExpiresAtMs then
    keepIndexesUntil(indexKey, expiryKey, record.expiresAtMs, record.retentionMs)
  end
  local flagged, wasFlagged = ATTENTION_STATES[record.state], ATTENTION_STATES[record.indexedState]
  if flagged and (not wasFlagged or record.updatedAtMs ~= record.indexedAtMs) then
    local _, _, _, _, _, attentionKey = indexNames(key)
    redis.call('ZADD', attentionKey, record.updatedAtMs, member)
    keepAttentionUntil(attentionKey, record.expiresAtMs, record.retentionMs)
  elseif wasFlagged and not flagged then
    local _, _, _, _, _, attentionKey = indexNames(key)
    redis.call('ZREM', attentionKey, member)
  end
  record.indexedState, record.indexedAtMs = record.state, record.updatedAtMs
  record.indexedExpiresAtMs = record.expiresAtMs
end

-- Drops the record's index entries (both indexes): the record is being deleted.
local function unindexRecord(key, record)
  local indexKey, expiryKey = indexNames(key)
  local member = memberKey(key)
  redis.call('ZREM', indexKey, member)
  redis.call('ZREM', expiryKey, 'r|' .. member)
  if ATTENTION_STATES[record.indexedState] then
    local _, _, _, _, _, attentionKey = indexNames(key)
    redis.call('ZREM', attentionKey, member)
  end
end

-- The state of a record string without decoding it: the first value, a MessagePack fixstr
-- (every state is shorter than 32 bytes).
local function recordState(raw)
  return string.sub(raw, 2, 1 + string.byte(raw, 1) - 160)
end

-- `key` is the record's key: a record claimed natively reads its deadlines from the key's expiry.
local function decodeRecord(raw, key)
  local state, fence, attempt, owner, leaseExpiresAtMs, expiresAtMs, retentionMs, tool, fingerprint,
    outcome, errorType, errorMessage, runId, callId, description, claimedAtMs, updatedAtMs,
    resolution, waited, codec, leaseMs, tenant, approval = cmsgpack.unpack(raw)
  local unindexedTenant = nil
  if leaseExpiresAtMs == nil then
    -- Claimed natively: the key expires at lease + retention after the claim, by the Redis clock,
    -- and only a script that rewrites the value (with absolute deadlines) changes that expiry.
    local expireAtMs = redis.call('PEXPIRETIME', key)
    if type(leaseMs) ~= 'number' or type(tenant) ~= 'string' or expireAtMs < 0 then
      error({ err = 'TOOLFENCE_RECORD a natively claimed record without its lease or expiry' })
    end
    expiresAtMs = expireAtMs
    leaseExpiresAtMs = expireAtMs - retentionMs
    claimedAtMs = leaseExpiresAtMs - leaseMs
    updatedAtMs = claimedAtMs
    unindexedTenant = tenant
  end
  -- A record written by a version that did not bound durations can hold a deadline above 2^53,
  -- which no longer reads back as the integer it meant: every repeat failed to decode and the key
  -- was stuck. Read such a deadline as the largest exact one and such a retention as the longest
  -- allowed, so the record decodes and the next write stores bounded values.
  if leaseExpiresAtMs > MAX_EXACT_MS then leaseExpiresAtMs = MAX_EXACT_MS end
  if expiresAtMs > MAX_EXACT_MS then expiresAtMs = MAX_EXACT_MS end
  if retentionMs > MAX_RETENTION_MS then retentionMs = MAX_RETENTION_MS end
  return {
    state = state, fence = fence, attempt = attempt, owner = owner,
    leaseExpiresAtMs = leaseExpiresAtMs, expiresAtMs = expiresAtMs, retentionMs = retentionMs,
    tool = tool, fingerprint = fingerprint,
    outcome = outcome, errorType = errorType, errorMessage = errorMessage,
    runId = runId, callId = callId, description = description,
    claimedAtMs = claimedAtMs, updatedAtMs = updatedAtMs, resolution = resolution, waited = waited,
    codec = codec, approval = approval,
    -- The scores its index entries were written with (a write moves only what changed; a
    -- read-only repeat pays nothing for the index). A natively claimed record has none.
    indexedState = unindexedTenant == nil and state or nil,
    indexedAtMs = unindexedTenant == nil and updatedAtMs or nil,
    indexedExpiresAtMs = unindexedTenant == nil and expiresAtMs or nil,
    -- Set while the record is as the native claim wrote it: packRecord keeps that form, leaseMs
    -- included, until writeRecord writes the deadlines and the index entries.
    unindexedTenant = unindexedTenant, leaseMs = leaseMs,
  }
end

local function readRecord(key)
  local raw = redis.call('GET', key)
  if not raw then
    return nil
  end
  return decodeRecord(raw, key)
end

-- The record as its one Redis string (as the native claim wrote it while it is unindexed: a write
-- that keeps the key's expiry, watch-1.lua's mark, keeps the deadlines it derives from it).
local function packRecord(record)
  if record.unindexedTenant ~= nil then
    return cmsgpack.pack(record.state, record.fence, record.attempt, record.owner,
      nil, nil, record.retentionMs, record.tool, record.fingerprint,
      record.outcome, record.errorType, record.errorMessage, record.runId, record.callId,
      record.description, nil, nil, record.resolution, record.waited,
      record.codec, record.leaseMs, record.unindexedTenant)
  end
  if record.approval ~= nil then
    -- The two nils: a native claim's leaseMs and tenant (such a record never had an approval).
    return cmsgpack.pack(record.state, record.fence, record.attempt, record.owner,
      record.leaseExpiresAtMs, record.expiresAtMs, record.retentionMs, record.tool, record.fingerprint,
      record.outcome, record.errorType, record.errorMessage, record.runId, record.callId,
      record.description, record.claimedAtMs, record.updatedAtMs, record.resolution, record.waited,
      record.codec, nil, nil, record.approval)
  end
  return cmsgpack.pack(record.state, record.fence, record.attempt, record.owner,
    record.leaseExpiresAtMs, record.expiresAtMs, record.retentionMs, record.tool, record.fingerprint,
    record.outcome, record.errorType, record.errorMessage, record.runId, record.callId,
    record.description, record.claimedAtMs, record.updatedAtMs, record.resolution, record.waited,
    record.codec)
end

-- Writes the record and sets its expiry (retention) in one command, then its index entries
-- (`tenant`: see indexRecord; a natively claimed record names its own tenant, and gets its
-- first entries here).
local function writeRecord(key, record, tenant)
  record.leaseExpiresAtMs = math.min(record.leaseExpiresAtMs, MAX_EXACT_MS)
  record.expiresAtMs = math.min(record.expiresAtMs, MAX_EXACT_MS)
  tenant = tenant or record.unindexedTenant
  record.unindexedTenant = nil
  redis.call('SET', key, packRecord(record), 'PXAT', record.expiresAtMs)
  indexRecord(key, record, tenant)
end

-- Reply carrying a whole record: { code, nowMs, state, fence, attempt, owner, leaseExpiresAtMs,
-- expiresAtMs, tool, fingerprint, outcome|nil, errorType|nil, errorMessage|nil }.
-- `false` becomes a nil reply; a Lua nil would cut the array short.
-- Then runId, callId, description, claimedAtMs, updatedAtMs (each false when absent) and, for a
-- record an operator resolved, the 12 fields of its resolution entry (as resolve-1.lua packs them),
-- then retentionMs and the codec (false when absent) and, for a record with an operator's approval
-- entry, its 4 fields: approved (1|0), by|false, reason|false, atMs.
local function recordReply(code, now, record)
  local reply = {
    code, now, record.state, record.fence, record.attempt, record.owner, record.leaseExpiresAtMs,
    record.expiresAtMs, record.tool, record.fingerprint, record.outcome or false,
    record.errorType or false, record.errorMessage or false,
    record.runId or false, record.callId or false, record.description or false,
    record.claimedAtMs or false, record.updatedAtMs or false,
  }
  if record.resolution then
    local entry = { cmsgpack.unpack(record.resolution) }
    for index = 1, 11 do reply[#reply + 1] = entry[index] end
    -- `forced` (absent from entries written before it existed).
    reply[#reply + 1] = entry[12] or false
  end
  -- Last: the retention the call was claimed with (an operator's resolution keeps it).
  reply[#reply + 1] = record.retentionMs
  reply[#reply + 1] = record.codec or false
  if record.approval then
    local approved, by, reason, atMs = cmsgpack.unpack(record.approval)
    reply[#reply + 1] = approved
    reply[#reply + 1] = by or false
    reply[#reply + 1] = reason or false
    reply[#reply + 1] = atMs
  end
  return reply
end

-- Tells waiters (RedisStore.waitForSettle) that the record left `in_progress`, when one marked it
-- `waited` (watch-1.lua: a waiter subscribes to the channel first, then marks the record in one
-- script with its read, so either that read sees the record settled or this PUBLISH reaches it).
-- No waiter, no PUBLISH: on a Cluster each message goes to every node. Called before the record
-- is written back; the mark is dropped with it (no one waits on a settled record).
local function announceSettled(channel, state, record)
  if record.waited then
    record.waited = nil
    redis.call('PUBLISH', channel, state)
  end
end

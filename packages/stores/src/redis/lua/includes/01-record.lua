--[[
  Shared helpers: the store's loader (../lua-scripts.ts) puts every includes/*.lua, in name
  order, before each script, so a helper may use the helpers of the files before it.

  A record is ONE Redis string holding a MessagePack sequence, in this order:
    state, fence, attempt, owner, leaseExpiresAtMs, expiresAtMs, retentionMs,
    tool, fingerprint, outcome, errorType, errorMessage
  (absent values are MessagePack nil). The string is smaller than a hash of the same fields
  (a 100-byte outcome pushes a hash out of its listpack encoding) and MessagePack is
  binary-safe, so outcomes round-trip byte for byte.

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

local function nowMs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function readRecord(key)
  local raw = redis.call('GET', key)
  if not raw then
    return nil
  end
  local state, fence, attempt, owner, leaseExpiresAtMs, expiresAtMs, retentionMs, tool, fingerprint,
    outcome, errorType, errorMessage = cmsgpack.unpack(raw)
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
  }
end

-- Writes the record and sets its expiry (retention) in one command.
local function writeRecord(key, record)
  record.leaseExpiresAtMs = math.min(record.leaseExpiresAtMs, MAX_EXACT_MS)
  record.expiresAtMs = math.min(record.expiresAtMs, MAX_EXACT_MS)
  local packed = cmsgpack.pack(record.state, record.fence, record.attempt, record.owner,
    record.leaseExpiresAtMs, record.expiresAtMs, record.retentionMs, record.tool, record.fingerprint,
    record.outcome, record.errorType, record.errorMessage)
  redis.call('SET', key, packed, 'PXAT', record.expiresAtMs)
end

-- Reply carrying a whole record: { code, nowMs, state, fence, attempt, owner, leaseExpiresAtMs,
-- expiresAtMs, tool, fingerprint, outcome|nil, errorType|nil, errorMessage|nil }.
-- `false` becomes a nil reply; a Lua nil would cut the array short.
local function recordReply(code, now, record)
  return {
    code, now, record.state, record.fence, record.attempt, record.owner, record.leaseExpiresAtMs,
    record.expiresAtMs, record.tool, record.fingerprint, record.outcome or false,
    record.errorType or false, record.errorMessage or false,
  }
end

-- Tells waiters (RedisStore.waitForSettle) that the record left `in_progress`.
local function announceSettled(channel, state)
  redis.call('PUBLISH', channel, state)
end

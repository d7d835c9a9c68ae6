--[[
  Writes the index entries of the records the store claimed natively (RedisStore on Redis >= 7:
  `SET ... NX PX ... GET`, no script, so no index entry) among the record keys given, and their
  deadlines into their values (writeRecord, includes/01-record.lua). The common path writes them
  in the record's first script (its complete, renew or takeover); this pass is for the records no
  script touched yet, a holder still running or gone: list (of in-progress or lease-expired
  records) and forget run it first over the tenant's record keys, which the client iterates
  (native-index.ts), so an operator sees every record whose holder was killed after its claim.

  Input:
    KEYS[1] a record key of the tenant (names the tenant's slot)

    ARGV[1..n] record keys of the same tenant

  Output:
    { 10, nowMs, indexed }  how many records got their entries now
]]
local indexed = 0
for _, key in ipairs(ARGV) do
  local raw = redis.call('GET', key)
  -- Settled records were written by a script (with their entries): only in-progress ones are read.
  if raw and recordState(raw) == 'in_progress' then
    local record = decodeRecord(raw, key)
    if record.unindexedTenant ~= nil then
      writeRecord(key, record)
      indexed = indexed + 1
    end
  end
end
return { 10, nowMs(), indexed }

--[[
  Reads a record with the Redis clock for a waiter (RedisStore.waitForSettle: it judges the lease
  deadline by that clock), which subscribed to the record's channel before; an in-progress record
  not yet marked is marked `waited`, so the script that settles it PUBLISHes (announceSettled,
  includes/01-record.lua). The mark and the read are one step: either this read sees the record
  settled, or the settling script sees the mark. Only the mark is written (SET ... KEEPTTL):
  state, deadlines and index entries stay.

  Input:
    KEYS[1] record key

  Output:
    { 15, nowMs, <record> }  found
    { 11, nowMs }  not found (released or past retention)
  <record> as in claim-1.lua
]]
local key = KEYS[1]

local now = nowMs()
local record = readRecord(key)

if not record then
  return { 11, now }
end
if record.state == 'in_progress' and not record.waited then
  record.waited = true
  redis.call('SET', key, packRecord(record), 'KEEPTTL')
end
return recordReply(15, now, record)

-- begin_partition_change: start changing the number of partitions of a topic, unless it is no
-- longer the one the caller read or another change is on its way. Not a transition of a message.
-- A change: begin; mark every partition of both counts other than partition 0 with
-- "?<new count>:<token>", each only while it holds no message (mark_partition), so that from then
-- on every call is refused there; then commit (the new count takes effect for every application at
-- once) and mark the new count's partitions "<new count>:<token>", or else abort and put the
-- markers back. While it is recorded, an application whose call a marked partition refused waits
-- for it to end, and no other change begins; the record expires on its own if its application
-- dies, and the markers it left are repaired by the calls they refuse.
-- KEYS[1] partition count STRING  the topic's count, absent for 1
-- KEYS[2] partition change STRING "<token>:<new count>" of a change on its way; expires
-- KEYS[3] dead-letters watch STRING   present while the topic's dead letters are listened to; only
--         read, so that the change has the partitions it marks copy dead letters too
-- ARGV[1] the count the caller read
-- ARGV[2] the new count
-- ARGV[3] the change's token
-- ARGV[4] ms until the record expires
-- Returns {1 if begun else 0, the count, the change recorded now or '', 1 if the topic's dead
-- letters are listened to else 0}.
-- Replayed: the second run finds its own change recorded, begins it again (renewing the expiry) and
-- returns 1.
local count = redis.call('GET', KEYS[1]) or '1'
local change = redis.call('GET', KEYS[2])
local mine = ARGV[3] .. ':' .. ARGV[2]
local watched = redis.call('EXISTS', KEYS[3])
if count ~= ARGV[1] or (change and change ~= mine) then
  return {0, count, change or '', watched}
end
redis.call('SET', KEYS[2], mine, 'PX', ARGV[4])
return {1, count, mine, watched}

-- release: hand a message back unfinished, e.g. when its consumer shuts down
-- (state: in flight -> ready, at the head of the ready list of its priority; attempts unchanged).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer
-- KEYS[3] leases HASH     id -> lease token
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0; only read
-- KEYS[5] ready 1 LIST ids of priority 1 waiting for a consumer, oldest first
-- KEYS[6] ready 2 LIST the same for priority 2
-- KEYS[7] ready 3 LIST the same for priority 3
-- KEYS[8] ready 4 LIST the same for priority 4
-- KEYS[9] ready 5 LIST the same for priority 5
-- KEYS[10] ready 6 LIST the same for priority 6
-- KEYS[11] ready 7 LIST the same for priority 7
-- KEYS[12] ready 8 LIST the same for priority 8
-- KEYS[13] ready 9 LIST the same for priority 9
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] signal channel
-- ARGV[4] topic
-- Returns 1 if the message is ready again, 0 if the lease had been lost.
-- Replayed: idempotent (the second run finds no lease and returns 0).
-- @include expect
-- @include holds_lease
-- @include ready_list
-- @include uses_priorities
local id = ARGV[1]
if not holds_lease(KEYS[3], id, ARGV[2]) then
  return 0
end
expect(KEYS[1], 'zset')
local list = KEYS[2]
if uses_priorities(4) then
  list = ready_list(KEYS[2], 4, redis.call('HGET', KEYS[4], id))
end
-- Destination first: a ready list of the wrong type fails here, before anything is written.
redis.call('LPUSH', list, id)
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[3], id)
signal(ARGV[3], 'r' .. ARGV[4])
return 1

-- release: hand a message back unfinished, e.g. when its consumer shuts down
-- (state: in flight -> ready, at the head of the list; attempts unchanged).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer
-- KEYS[3] leases HASH     id -> lease token
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] signal channel
-- ARGV[4] topic
-- Returns 1 if the message is ready again, 0 if the lease had been lost.
-- Replayed: idempotent (the second run finds no lease and returns 0).
local id = ARGV[1]
if not holds_lease(KEYS[3], id, ARGV[2]) then
  return 0
end
expect(KEYS[1], 'zset')
-- Destination first: a ready list of the wrong type fails here, before anything is written.
redis.call('LPUSH', KEYS[2], id)
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[3], id)
signal(ARGV[3], 'r' .. ARGV[4])
return 1

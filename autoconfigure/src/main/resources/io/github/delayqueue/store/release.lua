-- release: hand a message back unfinished, e.g. when its consumer shuts down
-- (state: in flight -> ready, at the head of the list; attempts unchanged).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer
-- ARGV[1] id
-- ARGV[2] lease deadline held by the caller (proof of the lease)
-- ARGV[3] signal channel
-- ARGV[4] topic
-- Returns 1 if the message is ready again, 0 if the lease had been lost.
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[3], 'r' .. ARGV[4])
return 1

-- extend_lease: a handler is still working; push its lease deadline forward
-- (state: in flight -> in flight).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- ARGV[1] id
-- ARGV[2] lease deadline held by the caller (proof of the lease)
-- ARGV[3] lease length in ms from Redis time
-- Returns the new lease deadline (epoch ms), or -1 if the lease had been lost.
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then
  return -1
end
local deadline = now_ms() + tonumber(ARGV[3])
if deadline <= tonumber(lease) then
  deadline = tonumber(lease) + 1
end
redis.call('ZADD', KEYS[1], deadline, ARGV[1])
return deadline

-- extend_lease: a handler is still working; push its lease deadline forward
-- (state: in flight -> in flight). The lease token stays the same.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] leases HASH     id -> lease token
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] lease length in ms from Redis time
-- Returns the new lease deadline (epoch ms), or -1 if the lease had been lost.
-- Replayed: idempotent (extends again from the time of the second run).
-- @include holds_lease
local id = ARGV[1]
if not holds_lease(KEYS[2], id, ARGV[2]) then
  return -1
end
local lease = redis.call('ZSCORE', KEYS[1], id)
if not lease then
  return -1
end
local deadline = math.max(tonumber(lease), now_ms() + tonumber(ARGV[3]))
redis.call('ZADD', KEYS[1], deadline, id)
return deadline

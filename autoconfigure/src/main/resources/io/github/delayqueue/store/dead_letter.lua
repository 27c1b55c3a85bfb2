-- dead_letter: a message failed for good; keep it with its attempts and last error in the
-- dead-letter set (state: in flight -> dead).
-- KEYS[1] in-flight ZSET       id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH        id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[4] dead messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[5] dead errors HASH     id -> last error
-- ARGV[1] id
-- ARGV[2] lease deadline given by claim (proof of the lease)
-- ARGV[3] last error
-- A stored message whose header is unreadable is kept exactly as it was.
-- Returns 1 if dead-lettered, 0 if the lease was lost.
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then
  return 0
end
local stored = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if not stored then
  return 0
end
local now = now_ms()
local attempts, due, bodyAt = header(stored)
local updated = stored
if attempts then
  updated = (attempts + 1) .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt)
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], updated)
redis.call('HSET', KEYS[5], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return 1

-- retry: a delivery failed; schedule the next attempt after a backoff
-- (state: in flight -> scheduled, attempts + 1). Wakes the brokers when it becomes the earliest due.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] scheduled ZSET  id scored by due time
-- ARGV[1] id
-- ARGV[2] lease deadline given by claim (proof of the lease)
-- ARGV[3] backoff in ms from Redis time
-- ARGV[4] signal channel
-- ARGV[5] topic
-- A stored message whose "<attempts>:<due ms>:" header is unreadable is handled as attempts 0.
-- Returns the due time of the next attempt (epoch ms), or -1 if the lease was lost.
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not lease or tonumber(lease) ~= tonumber(ARGV[2]) then
  return -1
end
local stored = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if not stored then
  return -1
end
local now = now_ms()
local due = now + tonumber(ARGV[3])
local attempts, _, bodyAt = header(stored)
local body = bodyAt and string.sub(stored, bodyAt) or (':' .. stored)
redis.call('HSET', KEYS[2], ARGV[1], ((attempts or 0) + 1) .. ':' .. string.format('%.0f', due) .. body)
redis.call('ZADD', KEYS[3], due, ARGV[1])
local head = redis.call('ZRANGE', KEYS[3], 0, 0)
if head[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[4], 'b' .. ARGV[5])
end
return due

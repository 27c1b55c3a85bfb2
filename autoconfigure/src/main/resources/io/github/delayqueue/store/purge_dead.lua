-- purge_dead: delete dead-lettered messages for good, with their last errors (state: dead -> gone).
-- Bounded: at most ARGV[1] messages per call.
-- KEYS[1] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[2] dead messages HASH   id -> stored message
-- KEYS[3] dead errors HASH     id -> last error
-- ARGV[1] largest number of messages to delete
-- ARGV[2..] ids to delete; without them, the ARGV[1] oldest dead messages
-- Returns {messages deleted, dead messages left}.
local ids = {}
if #ARGV >= 2 then
  for i = 2, math.min(#ARGV, 1 + tonumber(ARGV[1])) do
    if redis.call('ZSCORE', KEYS[1], ARGV[i]) or redis.call('HEXISTS', KEYS[2], ARGV[i]) == 1 then
      ids[#ids + 1] = ARGV[i]
    end
  end
else
  ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
end
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HDEL', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(ids))
end
return {#ids, redis.call('ZCARD', KEYS[1])}

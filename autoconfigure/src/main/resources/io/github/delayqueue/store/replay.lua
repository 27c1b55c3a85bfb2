-- replay: give dead-lettered messages another round of attempts (state: dead -> scheduled, due
-- now, attempts reset to 0, last error dropped). Wakes the brokers.
-- A dead message is skipped, and stays dead, when its id is stored again (sent anew since it died)
-- or its stored header is unreadable (it would only be dead-lettered again as corrupt).
-- KEYS[1] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[2] dead messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] dead errors HASH     id -> last error
-- KEYS[4] messages HASH        id -> stored message
-- KEYS[5] scheduled ZSET       id scored by due time (epoch ms)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] largest number of messages to look at
-- ARGV[4] rank in the dead set to start at (0 = the oldest), used when no ids follow
-- ARGV[5..] ids to replay; without them, up to ARGV[3] dead ids from rank ARGV[4] on, oldest first
-- Returns {messages replayed, messages looked at but left dead or not found, then the replayed ids}.
local now = now_ms()
local ids = {}
if #ARGV >= 5 then
  for i = 5, math.min(#ARGV, 4 + tonumber(ARGV[3])) do
    ids[#ids + 1] = ARGV[i]
  end
else
  local first = tonumber(ARGV[4])
  ids = redis.call('ZRANGE', KEYS[1], first, first + tonumber(ARGV[3]) - 1)
end
local replayed = {}
local skipped = 0
for _, id in ipairs(ids) do
  local stored = redis.call('HGET', KEYS[2], id)
  local attempts, _, bodyAt
  if stored then
    attempts, _, bodyAt = header(stored)
  end
  if attempts and redis.call('HEXISTS', KEYS[4], id) == 0 then
    redis.call('HSET', KEYS[4], id, '0:' .. string.format('%.0f', now) .. string.sub(stored, bodyAt))
    redis.call('ZADD', KEYS[5], now, id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZREM', KEYS[1], id)
    replayed[#replayed + 1] = id
  else
    skipped = skipped + 1
  end
end
if #replayed > 0 then
  redis.call('PUBLISH', ARGV[1], 'b' .. ARGV[2])
end
local out = {#replayed, skipped}
for _, id in ipairs(replayed) do
  out[#out + 1] = id
end
return out

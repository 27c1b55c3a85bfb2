-- expire_leases: take back messages whose consumer died or hung past its lease
-- (state: in flight -> ready, attempts + 1; or in flight -> dead once attempts reach the maximum).
-- Bounded: at most ARGV[1] messages per call.
-- KEYS[1] in-flight ZSET       id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH        id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] ready LIST           ids waiting for a consumer
-- KEYS[4] dead ZSET            id scored by the time it died
-- KEYS[5] dead messages HASH   id -> stored message
-- KEYS[6] dead errors HASH     id -> last error
-- ARGV[1] largest number of messages to take back
-- ARGV[2] maximum attempts of the topic
-- ARGV[3] signal channel
-- ARGV[4] topic
-- A message whose stored header is unreadable is dead-lettered as corrupt.
-- Returns {messages made ready again, messages dead-lettered, ms until the next lease ends or -1,
--          then the ids made ready again, then the ids dead-lettered}.
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local maxAttempts = tonumber(ARGV[2])
local requeued = {}
local dead = {}
for _, id in ipairs(ids) do
  local stored = redis.call('HGET', KEYS[2], id)
  if stored then
    local attempts, due, bodyAt = header(stored)
    if not attempts then
      redis.call('HDEL', KEYS[2], id)
      redis.call('HSET', KEYS[5], id, stored)
      redis.call('HSET', KEYS[6], id, 'stored message is corrupt: unreadable header')
      redis.call('ZADD', KEYS[4], now, id)
      dead[#dead + 1] = id
    elseif attempts + 1 >= maxAttempts then
      local updated = (attempts + 1) .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt)
      redis.call('HDEL', KEYS[2], id)
      redis.call('HSET', KEYS[5], id, updated)
      redis.call('HSET', KEYS[6], id, 'lease expired on attempt ' .. (attempts + 1) .. ' of ' .. maxAttempts)
      redis.call('ZADD', KEYS[4], now, id)
      dead[#dead + 1] = id
    else
      local updated = (attempts + 1) .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt)
      redis.call('HSET', KEYS[2], id, updated)
      redis.call('RPUSH', KEYS[3], id)
      requeued[#requeued + 1] = id
    end
  end
end
if #ids > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - 1)
end
if #requeued > 0 then
  redis.call('PUBLISH', ARGV[3], 'r' .. ARGV[4])
end
local nextLease = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if nextLease[2] then
  wait = math.max(0, tonumber(nextLease[2]) - now)
end
local out = {#requeued, #dead, wait}
for _, id in ipairs(requeued) do
  out[#out + 1] = id
end
for _, id in ipairs(dead) do
  out[#out + 1] = id
end
return out

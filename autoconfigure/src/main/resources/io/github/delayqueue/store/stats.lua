-- stats: count a topic's messages in each state and find its next and oldest waiting due times,
-- for the operations endpoint and the health check. Reads only: changes no state.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time (epoch ms)
-- KEYS[3] ready LIST      ids waiting for a consumer, oldest first
-- KEYS[4] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[5] dead ZSET       id scored by the time it died (epoch ms)
-- ARGV[1] most ids at the head of the ready list to look at for the oldest ready message (ids
--         left there by cancel or reschedule are passed over)
-- Returns {Redis time (epoch ms), stored messages, scheduled, in flight, dead,
--          due time of the earliest scheduled message or -1, due time of the oldest ready message or -1}.
-- Ready messages are the stored ones neither scheduled nor in flight: stored - scheduled - in flight.
local now = now_ms()
local nextDue = -1
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if head[2] then
  nextDue = tonumber(head[2])
end
local oldestReady = -1
for _, id in ipairs(redis.call('LRANGE', KEYS[3], 0, tonumber(ARGV[1]) - 1)) do
  if not redis.call('ZSCORE', KEYS[2], id) and not redis.call('ZSCORE', KEYS[4], id) then
    local stored = redis.call('HGET', KEYS[1], id)
    if stored then
      local _, due = header(stored)
      if due then
        oldestReady = due
        break
      end
    end
  end
end
return {now, redis.call('HLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]), nextDue, oldestReady}

-- send: store new messages and schedule them (state: none -> scheduled).
-- A message whose id is already stored (scheduled, ready or in flight) is left as it is and
-- reported as a duplicate. Wakes the brokers when a message becomes the earliest one due.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time (epoch ms)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3..] four values per message: id, due kind ("d" = delay in ms from Redis time,
--           "a" = absolute epoch ms), the delay or due time, body
-- Returns two integers per message: duplicate (1 or 0), due time (epoch ms).
local now
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local headDue = head[2] and tonumber(head[2])
local earliest
local out = {}
for i = 3, #ARGV, 4 do
  local id = ARGV[i]
  local due = tonumber(ARGV[i + 2])
  if ARGV[i + 1] == 'd' then
    now = now or now_ms()
    due = now + due
  end
  if redis.call('HSETNX', KEYS[1], id, '0:' .. string.format('%.0f', due) .. ':' .. ARGV[i + 3]) == 0 then
    local _, storedDue = header(redis.call('HGET', KEYS[1], id))
    out[#out + 1] = 1
    out[#out + 1] = storedDue or 0
  else
    redis.call('ZADD', KEYS[2], due, id)
    if not earliest or due < earliest then
      earliest = due
    end
    out[#out + 1] = 0
    out[#out + 1] = due
  end
end
if earliest and (not headDue or earliest < headDue) then
  redis.call('PUBLISH', ARGV[1], 'b' .. ARGV[2])
end
return out

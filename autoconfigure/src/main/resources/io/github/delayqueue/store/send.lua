-- send: store new messages and schedule them (state: none -> scheduled).
-- A message whose id is already stored (scheduled, ready or in flight) is left as it is. It is
-- reported as a duplicate unless the stored body is the one sent: then this is the same message
-- sent again (a client that re-sends a command whose reply it lost, or a caller retrying a send
-- that failed), and it is reported as stored, with the due time it has. Wakes the brokers when a
-- message becomes the earliest one due.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time (epoch ms)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3..] four values per message: id, due kind ("d" = delay in ms from Redis time,
--           "a" = absolute epoch ms), the delay or due time, body
-- Returns two integers per message: duplicate (1 or 0), due time (epoch ms).
-- Replayed: idempotent (the same body again is reported as stored, changing nothing).
local now
local headDue = head_due(KEYS[2])
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
    local stored = redis.call('HGET', KEYS[1], id)
    local _, storedDue, bodyAt = header(stored)
    local same = bodyAt and string.sub(stored, bodyAt + 1) == ARGV[i + 3]
    out[#out + 1] = same and 0 or 1
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

-- reschedule: give a pending message a new due time (state: scheduled or ready -> scheduled).
-- A message in flight is left alone. Wakes the brokers when it becomes the earliest due.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time
-- KEYS[3] in-flight ZSET  id scored by lease deadline
-- ARGV[1] id
-- ARGV[2] due kind: "d" = delay in ms from Redis time, "a" = absolute epoch ms
-- ARGV[3] the delay or due time
-- ARGV[4] signal channel
-- ARGV[5] topic
-- A stored message whose header is unreadable is rescheduled but left as it is.
-- Returns the new due time (epoch ms), or -1 if the message is not pending.
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored or redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return -1
end
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then
  due = now_ms() + due
end
local attempts, _, bodyAt = header(stored)
if attempts then
  redis.call('HSET', KEYS[1], ARGV[1], attempts .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt))
end
redis.call('ZADD', KEYS[2], due, ARGV[1])
local head = redis.call('ZRANGE', KEYS[2], 0, 0)
if head[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[4], 'b' .. ARGV[5])
end
return due

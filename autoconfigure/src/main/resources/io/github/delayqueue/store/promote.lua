-- promote: move messages that are due, or due within the lookahead, from the schedule to the
-- ready list, in due order (state: scheduled -> ready). Consumers hold a message that is not yet
-- due and invoke the listener at its due time. Bounded: at most ARGV[1] messages per call.
-- KEYS[1] scheduled ZSET  id scored by due time (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer, oldest first
-- ARGV[1] largest number of messages to move
-- ARGV[2] signal channel
-- ARGV[3] topic
-- ARGV[4] lookahead in ms: also move messages due up to this long from now (0: only due ones)
-- Returns {messages moved, microseconds until the next scheduled message is due (0 if already due),
--          or -1 if none}.
local nowUs = now_us()
local now = math.floor(nowUs / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + tonumber(ARGV[4]), 'LIMIT', 0, tonumber(ARGV[1]))
if #ids > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ids))
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - 1)
  redis.call('PUBLISH', ARGV[2], 'r' .. ARGV[3])
end
local nextDue = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if nextDue[2] then
  wait = math.max(0, tonumber(nextDue[2]) * 1000 - nowUs)
end
return {#ids, wait}

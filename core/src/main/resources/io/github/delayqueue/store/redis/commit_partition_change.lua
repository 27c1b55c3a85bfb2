-- commit_partition_change: make a change of a topic's number of partitions take effect, once the
-- caller marked every other partition of both counts for it (see begin_partition_change): the
-- topic's count becomes the new one for every application at once, and partition 0 refuses the
-- calls of the old count from then on. Refused, changing nothing, when the change is no longer
-- recorded (it expired) or when the new count is above 1 and partition 0 holds a message, stored or
-- dead, in it or its dead-letter queue, or a schedule, or a group whose pause has not ended, or
-- remembers an id whose deduplication window has not ended (the new count would look for it in
-- another partition).
-- KEYS[1] partition count STRING  the topic's count, absent for 1
-- KEYS[2] partition change STRING "<token>:<new count>" of a change on its way; expires
-- KEYS[3] messages HASH           partition 0's stored messages; only read
-- KEYS[4] dead ZSET               partition 0's dead letters; only read
-- KEYS[5] dead-letters messages HASH  its dead-letter queue's stored messages; only read
-- KEYS[6] dead-letters dead ZSET      its dead-letter queue's dead letters; only read
-- KEYS[7] schedules HASH              the schedules whose ticks it holds; only read
-- KEYS[8] remembered ZSET            ids remembered for deduplication, scored by the end of their
--         window (epoch ms); only read
-- KEYS[9] group pauses ZSET          partition 0's paused groups, scored by when their pauses end
--         (epoch ms; +inf: when resumed); only read
-- ARGV[1] the count the change began from
-- ARGV[2] the new count
-- ARGV[3] the change's token
-- Returns {1, 0} when committed; {0, 0} when the change is no longer recorded; {0, messages held,
-- the ids remembered whose window has not ended, the end of the last window (epoch ms, 0 for
-- none), the first 5 of those ids} when partition 0 holds messages or remembers ids.
-- Replayed: the second run finds no change recorded and returns {0, 0}; the caller then reads the
-- count, finds the new one and keeps the markers.
-- @include remembered_ids
local change = redis.call('GET', KEYS[2])
if change ~= ARGV[3] .. ':' .. ARGV[2] or (redis.call('GET', KEYS[1]) or '1') ~= ARGV[1] then
  return {0, 0}
end
if ARGV[2] ~= '1' then
  local held = redis.call('HLEN', KEYS[3]) + redis.call('ZCARD', KEYS[4]) + redis.call('HLEN', KEYS[5])
    + redis.call('ZCARD', KEYS[6]) + redis.call('HLEN', KEYS[7])
    + redis.call('ZCOUNT', KEYS[9], '(' .. string.format('%.0f', now_ms()), '+inf')
  local remembered, lastEnd, some = remembered_ids(KEYS[8])
  if held > 0 or remembered > 0 then
    return {0, held, remembered, lastEnd, some}
  end
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[2])
return {1, 0}

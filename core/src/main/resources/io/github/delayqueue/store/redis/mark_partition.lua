-- mark_partition: set the count marker of one partition of a topic (see partition_refusal) if it
-- still holds what the caller read and, when asked, only while the partition holds no message,
-- stored or dead, its dead-letter queue's included, no schedule, no group whose pause has not
-- ended (the group's partition changes with the count), and remembers no id whose
-- deduplication window has not ended (a new count would look for it in another partition). A change of the topic's number of partitions marks each partition of both counts
-- other than partition 0 with "?<new count>:<token>", which refuses every call, then commits and
-- sets the new count's partitions to "<new count>:<token>", or aborts and puts the markers back (see
-- begin_partition_change); an application repairs a marker that a change left behind, or that was
-- never set.
-- KEYS[1] partition count STRING  this partition's count marker
-- KEYS[2] messages HASH           this partition's stored messages; only read
-- KEYS[3] dead ZSET               this partition's dead letters; only read
-- KEYS[4] dead-letters messages HASH  its dead-letter queue's stored messages; only read
-- KEYS[5] dead-letters dead ZSET      its dead-letter queue's dead letters; only read
-- KEYS[6] schedules HASH              the schedules whose ticks it holds; only read
-- KEYS[7] dead-letters watch STRING   present while the topic's dead letters are listened to
-- KEYS[8] remembered ZSET            ids remembered for deduplication, scored by the end of their
--         window (epoch ms); only read
-- KEYS[9] group pauses ZSET          group -> when its pause ends (epoch ms; +inf: when it is
--         resumed); only read
-- ARGV[1] the marker the caller read ('' for none), or '?' to read only
-- ARGV[2] the new marker ('' to delete it)
-- ARGV[3] 1 to set it only while the partition holds no message, else 0
-- ARGV[4] 1 to have the partition copy dead letters too (set KEYS[7]) when the marker is set, else 0
-- Returns {1 if set else 0, the marker found ('' for none), messages held (stored and dead, in the
-- partition and its dead-letter queue, schedules, and groups paused), 1 if KEYS[7] was present else 0, the ids
-- remembered whose window has not ended, the end of the last window (epoch ms, 0 for none), the
-- first 5 of those ids}.
-- Replayed: the second run finds the new marker instead of the one read and returns 0 with it; the
-- caller counts a marker found equal to the one it sets as set.
-- @include remembered_ids
local marker = redis.call('GET', KEYS[1]) or ''
local held = redis.call('HLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3]) + redis.call('HLEN', KEYS[4])
  + redis.call('ZCARD', KEYS[5]) + redis.call('HLEN', KEYS[6])
  + redis.call('ZCOUNT', KEYS[9], '(' .. string.format('%.0f', now_ms()), '+inf')
local watched = redis.call('EXISTS', KEYS[7])
local remembered, lastEnd, some = remembered_ids(KEYS[8])
if ARGV[1] == '?' or marker ~= ARGV[1] or (ARGV[3] == '1' and (held > 0 or remembered > 0)) then
  return {0, marker, held, watched, remembered, lastEnd, some}
end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[7], '1')
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return {1, marker, held, watched, remembered, lastEnd, some}

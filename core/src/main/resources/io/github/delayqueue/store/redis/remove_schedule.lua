-- remove_schedule: removes a schedule (state: any, or the one the caller read -> none); tick
-- messages already sent stay.
-- KEYS[1] schedules HASH          name -> "<next tick ms>:<paused 0 or 1>:<definition>"
-- KEYS[2] partition count STRING  the count marker of this partition (see partition_refusal)
-- ARGV[1] the number of partitions the caller spreads the topic over
-- ARGV[2] name
-- ARGV[3] the state the caller read, to remove it only while it is still that one ('' for any)
-- Returns 1 if removed, 0 if unknown or not the state read; the error DQPARTITIONS when ARGV[1] is
-- not the partition's count.
-- Replayed: the second run finds nothing and returns 0.
-- @include partition_refusal
local refused = partition_refusal(KEYS[2], ARGV[1])
if refused then
  return refused
end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[3] then
  return 0
end
return redis.call('HDEL', KEYS[1], ARGV[2])

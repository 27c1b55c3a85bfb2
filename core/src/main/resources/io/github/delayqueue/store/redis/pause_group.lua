-- pause_group: pauses one group of a topic: claims pass its ready messages over until the pause
-- ends (ARGV[2] ms from now on the Redis clock) or until it is resumed (resume_group), whichever
-- comes first; without ARGV[2], until it is resumed. Pausing a paused group sets its end anew, but
-- never before the end of the group's strict-order wait (KEYS[4], written by retry.lua: a message
-- that waits in its group for its next attempt), which only its end lifts: the group stays paused
-- until the later of the two. A group without messages may be paused: the messages that come later
-- wait too. Its messages in
-- flight are not touched; no message changes state. A group in the rotation is parked there
-- (scored +inf, its tag kept in the group tags), as at its concurrency limit; a claim parks it too
-- should something else (a freed slot, a promote) put it back meanwhile, and the first claim after
-- the pause's end puts it back at its tag (see claim.lua).
-- KEYS[1] group pauses ZSET   group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- KEYS[2] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[3] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[4] group waits ZSET    group -> when its strict-order wait ends (epoch ms), see retry.lua;
--                             only read
-- ARGV[1] group
-- ARGV[2] the number of partitions the caller spreads the topic over
-- ARGV[3] signal channel
-- ARGV[4] topic
-- ARGV[5] pause length in ms (at least 1); absent for a pause that lasts until it is resumed
-- A pause that ends sooner than the one it replaces signals the topic's consumers, which claim
-- again and learn its new end (an idle one would otherwise claim at the end it was told before).
-- Returns {when the pause ends (epoch ms; the end of the group's wait when that is later), or -1
--          when it lasts until resumed; 1 if the group was paused already (and its pause not yet
--          ended) else 0}.
-- Or the error reply of partition_refusal, having changed nothing, when ARGV[2] is not the
-- partition's count (the group's partition is another under Redis' count).
-- Replayed: harmless (a pause with a length ends that length after the replay instead).
-- @include partition_refusal
local refused = partition_refusal(KEYS[3], ARGV[2])
if refused then
  return refused
end
local group = ARGV[1]
local length = tonumber(ARGV[5])
local now = now_ms()
local untilMs = length and (now + length) or nil
local before = tonumber(redis.call('ZSCORE', KEYS[1], group))
local wasPaused = before and (before == math.huge or before > now) and 1 or 0
local tag = redis.call('ZSCORE', KEYS[2], group)
local waitEnd = tonumber(redis.call('ZSCORE', KEYS[4], group))
if untilMs and waitEnd and waitEnd > untilMs then
  untilMs = waitEnd
end
redis.call('ZADD', KEYS[1], untilMs and string.format('%d', untilMs) or 'inf', group)
if wasPaused == 1 and untilMs and untilMs < before then
  signal(ARGV[3], 'r' .. ARGV[4])
end
if tag and tonumber(tag) ~= math.huge then
  redis.call('ZADD', KEYS[2], 'inf', group)
end
return {untilMs or -1, wasPaused}

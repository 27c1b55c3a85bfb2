-- advance_schedule: sends a schedule's due ticks and moves it to its next tick (state: next tick
-- n -> next tick m; for each tick sent: none -> scheduled), only if its state is still the one
-- the caller read: of the instances that find a tick due at once, one sends it.
-- KEYS[1] schedules HASH          name -> "<next tick ms>:<paused 0 or 1>:<definition>"
-- KEYS[2] messages HASH           id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] scheduled ZSET          id scored by due time (epoch ms)
-- KEYS[4] partition count STRING  the count marker of this partition (see partition_refusal)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the number of partitions the caller spreads the topic over
-- ARGV[4] name
-- ARGV[5] the state the caller read
-- ARGV[6] the new next tick (epoch ms)
-- ARGV[7] body of the tick messages
-- ARGV[8..] the ticks to send (epoch ms), each due at its time; none for ticks skipped
-- Returns {1, messages stored} when advanced, {0, 0} when the state is not the one read (another
-- instance advanced it, or it was changed, paused or removed); the error DQPARTITIONS when ARGV[3]
-- is not the partition's count.
-- Replayed: the second run finds the new state and returns {0, 0}.
-- @include expect
-- @include partition_refusal
-- @include store_ticks
local refused = partition_refusal(KEYS[4], ARGV[3])
if refused then
  return refused
end
if redis.call('HGET', KEYS[1], ARGV[4]) ~= ARGV[5] then
  return {0, 0}
end
expect(KEYS[2], 'hash')
local ticks = {}
for i = 8, #ARGV do
  ticks[#ticks + 1] = ARGV[i]
end
local stored = store_ticks(KEYS[2], KEYS[3], ARGV[4], ticks, ARGV[7], ARGV[1], ARGV[2])
local _, _, paused, definition = string.find(ARGV[5], '^%d+:([01]):(.*)$')
redis.call('HSET', KEYS[1], ARGV[4], ARGV[6] .. ':' .. paused .. ':' .. definition)
return {1, stored}

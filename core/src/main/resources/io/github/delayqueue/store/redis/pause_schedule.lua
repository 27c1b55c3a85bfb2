-- pause_schedule: pauses a schedule (state: running -> paused, its next tick kept for the
-- endpoint) or resumes it (state: paused -> running, next tick as given: ticks missed while paused
-- are not sent; but never before the tick it kept, which was not sent: should the Redis clock have
-- stepped back, a tick already sent is not sent again). Pausing a paused schedule or resuming a
-- running one changes nothing. A resume is refused while the schedule has a definition other than
-- the one its next tick was computed from (saved meanwhile by another instance): the caller reads
-- it again and computes anew.
-- KEYS[1] schedules HASH          name -> "<next tick ms>:<paused 0 or 1>:<definition>"
-- KEYS[2] partition count STRING  the count marker of this partition (see partition_refusal)
-- ARGV[1] the number of partitions the caller spreads the topic over
-- ARGV[2] name
-- ARGV[3] 1 to pause, 0 to resume
-- ARGV[4] on resume, the next tick (epoch ms), from the definition and the Redis time
-- ARGV[5] on resume, the definition ARGV[4] comes from ('' for any)
-- Returns {1 if changed else 0, the state (unchanged, of another definition, when a resume is
-- refused), or '' for an unknown schedule}; the error DQPARTITIONS when ARGV[1] is not the
-- partition's count.
-- Replayed: the second run finds the state changed and returns {0, it}.
-- @include partition_refusal
local refused = partition_refusal(KEYS[2], ARGV[1])
if refused then
  return refused
end
local state = redis.call('HGET', KEYS[1], ARGV[2])
if not state then
  return {0, ''}
end
local _, _, tick, paused, definition = string.find(state, '^(%d+):([01]):(.*)$')
if paused == ARGV[3] or (ARGV[3] == '0' and ARGV[5] ~= '' and definition ~= ARGV[5]) then
  return {0, state}
end
if ARGV[3] == '0' and tonumber(ARGV[4]) > tonumber(tick) then
  tick = ARGV[4]
end
state = tick .. ':' .. ARGV[3] .. ':' .. definition
redis.call('HSET', KEYS[1], ARGV[2], state)
return {1, state}

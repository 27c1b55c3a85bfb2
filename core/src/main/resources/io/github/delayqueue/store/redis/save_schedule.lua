-- save_schedule: creates a recurring schedule, or gives it another definition (state: none, or
-- another definition -> this definition, next tick as given, paused as it was), only if its state
-- is still the one the caller read with the Redis time it computed the next tick from: so the next
-- tick comes after every tick sent. The same definition again changes nothing, so every instance
-- may save the schedules it declares. A schedule's ticks are sent when due (advance_schedule), so
-- none is pending to replace. A state that is not in that form is replaced as if there were none.
-- KEYS[1] schedules HASH          name -> "<next tick ms>:<paused 0 or 1>:<definition>"
-- KEYS[2] partition count STRING  the count marker of this partition (see partition_refusal)
-- ARGV[1] the number of partitions the caller spreads the topic over
-- ARGV[2] name
-- ARGV[3] definition
-- ARGV[4] next tick (epoch ms), from the definition and the Redis time
-- ARGV[5] the state the caller read ('' for none)
-- Returns {1 if saved else 0, the state saved or found ('' for none), 1 if the state is not the one
-- read (nothing saved) else 0}; the error DQPARTITIONS when ARGV[1] is not the partition's count.
-- Replayed: the second run finds the definition saved and returns {0, its state, 0}.
-- @include partition_refusal
local refused = partition_refusal(KEYS[2], ARGV[1])
if refused then
  return refused
end
local state = redis.call('HGET', KEYS[1], ARGV[2])
if state and not string.match(state, '^%d+:[01]:') then
  -- Unreadable (written by something else): a save replaces it, as if there were none.
  state = false
end
local paused = '0'
if state then
  local _, flag, definition = string.match(state, '^(%d+):([01]):(.*)$')
  if definition == ARGV[3] then
    return {0, state, 0}
  end
  paused = flag or '0'
end
if (state or '') ~= ARGV[5] then
  return {0, state or '', 1}
end
state = ARGV[4] .. ':' .. paused .. ':' .. ARGV[3]
redis.call('HSET', KEYS[1], ARGV[2], state)
return {1, state, 0}

-- ready_waiting: 1 if the ready list KEYS[readyKey] or the group ready ZSET KEYS[groupReadyKey]
-- holds an id or, while the topic uses priorities (the priorities hash KEYS[base] is not empty, see
-- uses_priorities), a ready list of priorities 1 to 9 (KEYS[base + 1] .. KEYS[base + 9]) does;
-- else 0. The lists a claim reads (see ready_lists), no more: an id left in a list of a priority
-- while no message has one is never claimed, and counting it would make every consumer claim in
-- vain after each broker call, for good. One read while nothing is ready (EXISTS over the eleven
-- keys, as Redis deletes a list or a sorted set once it is empty), two while the ready list or the
-- group ready ZSET holds an id, three when only a list of a priority does; an id left in a list of
-- a priority (or a member left in the group ready ZSET by a cancel) counts while it is there, so the
-- answer may be 1 with nothing to claim, never 0 with something.
-- @include uses_priorities
local function ready_waiting(readyKey, base, groupReadyKey)
  if redis.call('EXISTS', KEYS[readyKey], KEYS[groupReadyKey], unpack(KEYS, base + 1, base + 9)) == 0 then
    return 0
  end
  if redis.call('EXISTS', KEYS[readyKey], KEYS[groupReadyKey]) > 0 or uses_priorities(base) then
    return 1
  end
  return 0
end

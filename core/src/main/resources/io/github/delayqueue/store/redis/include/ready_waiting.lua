-- ready_waiting: 1 if the ready list KEYS[readyKey] holds an id or, while the topic uses priorities
-- (the priorities hash KEYS[base] is not empty, see uses_priorities), a ready list of priorities 1
-- to 9 (KEYS[base + 1] .. KEYS[base + 9]) does; else 0. The lists a claim reads (see ready_lists),
-- no more: an id left in a list of a priority while no message has one is never claimed, and
-- counting it would make every consumer claim in vain after each broker call, for good. One read
-- while nothing is ready (EXISTS over the ten lists, as Redis deletes a list once it is empty),
-- two while the ready list holds an id, three when only a list of a priority does; an id left in
-- a list of a priority counts while priorities are used, so the answer may be 1 with nothing to
-- claim, never 0 with something.
-- @include uses_priorities
local function ready_waiting(readyKey, base)
  if redis.call('EXISTS', KEYS[readyKey], unpack(KEYS, base + 1, base + 9)) == 0 then
    return 0
  end
  if redis.call('EXISTS', KEYS[readyKey]) > 0 or uses_priorities(base) then
    return 1
  end
  return 0
end

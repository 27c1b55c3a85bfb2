-- ready_waiting: 1 if the ready list KEYS[readyKey] holds an id or, while the topic uses priorities
-- (the priorities hash KEYS[base] is not empty, see uses_priorities), a ready list of priorities 1
-- to 9 (KEYS[base + 1] .. KEYS[base + 9]) does; else 0. The lists a claim reads (see ready_lists),
-- no more: an id left in a list of a priority while no message has one is never claimed, and
-- counting it would make every consumer claim in vain after each broker call, for good. One read
-- (EXISTS) while nothing is ready and no priority is used, as Redis deletes a list once it is
-- empty; an id left in a list of a priority counts while priorities are used, so the answer may be
-- 1 with nothing to claim, never 0 with something.
-- @include uses_priorities
local function ready_waiting(readyKey, base)
  if redis.call('EXISTS', KEYS[readyKey]) > 0 then
    return 1
  end
  if not uses_priorities(base) then
    return 0
  end
  return redis.call('EXISTS', unpack(KEYS, base + 1, base + 9)) > 0 and 1 or 0
end

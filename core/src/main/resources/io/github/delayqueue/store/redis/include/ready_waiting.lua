-- ready_waiting: 1 if the ready list KEYS[readyKey] or a ready list of priorities 1 to 9
-- (KEYS[base + 1] .. KEYS[base + 9], as uses_priorities lays them out) holds an id, else 0. One
-- read for the ten lists, as Redis deletes a list once it is empty; an id left in a list of a
-- priority counts too, so the answer may be 1 with nothing to claim, never 0 with something.
local function ready_waiting(readyKey, base)
  return redis.call('EXISTS', KEYS[readyKey], unpack(KEYS, base + 1, base + 9)) > 0 and 1 or 0
end

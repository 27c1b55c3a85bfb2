-- ready_waiting: 1 if the ready list KEYS[readyKey], the group ready ZSET KEYS[groupReadyKey] or a
-- ready list of priorities 1 to 9 (KEYS[base + 1] .. KEYS[base + 9]) holds an id, else 0: the lists
-- a claim reads (see ready_lists; it reads the lists of priorities whenever one exists, so an id
-- left there, claimable or not, is taken or dropped by the next claim). One read (EXISTS over the
-- eleven keys, as Redis deletes a list or a sorted set once it is empty); an id left in a list (or a
-- member left in the group ready ZSET by a cancel) counts while it is there, so the answer may be 1
-- with nothing to claim, never 0 with something.
local function ready_waiting(readyKey, base, groupReadyKey)
  if redis.call('EXISTS', KEYS[readyKey], KEYS[groupReadyKey], unpack(KEYS, base + 1, base + 9)) == 0 then
    return 0
  end
  return 1
end

-- uses_priorities: whether any stored message of the topic has a priority above 0. One O(1) read.
-- Priorities: a message sent with a priority above 0 has an entry in the priorities HASH
-- (id -> priority, 1 to 9) while it is stored (scheduled, ready or in flight), from its send until
-- it is acknowledged, cancelled or dead-lettered, and while ready it waits in the ready list of its
-- priority instead of the ready list. A dead letter keeps its priority apart, in the dead
-- priorities HASH (id or buried name -> priority), until it is replayed (its entry moves back) or
-- purged, so that a new message of its id never shares its entry.
-- A script that moves ready messages takes the priorities hash and then the ready lists of
-- priorities 1 to 9 as KEYS[base], KEYS[base + 1] .. KEYS[base + 9], and reads HLEN of the hash
-- once: while it is 0, the topic uses no priority and the script does just what it did before.
local function uses_priorities(base)
  return redis.call('HLEN', KEYS[base]) > 0
end

-- uses_priorities: whether any stored or dead message of the topic has a priority above 0. One O(1)
-- read.
-- Priorities: a message sent with a priority above 0 has an entry in the priorities HASH
-- (id -> priority, 1 to 9) from its send until it is acknowledged, cancelled or purged, whatever
-- its state, and while ready it waits in the ready list of its priority instead of the ready list.
-- A script that moves ready messages takes the priorities hash and then the ready lists of
-- priorities 1 to 9 as KEYS[base], KEYS[base + 1] .. KEYS[base + 9], and reads HLEN of the hash
-- once: while it is 0, the topic uses no priority and the script does just what it did before.
local function uses_priorities(base)
  return redis.call('HLEN', KEYS[base]) > 0
end

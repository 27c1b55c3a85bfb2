-- dataset_marker: counts one more look at the marker of the queue's data under a key prefix, or
-- writes a new one when it is absent. Not a transition of a message: every instance calls it every
-- few seconds. A marker other than the one it saw before (gone, so written anew) says that Redis
-- lost the queue's data (restarted without persistence, flushed, or failed over to an empty
-- replica); the same marker with a count not above the one it saw last says that Redis went back
-- in time (restarted from an older snapshot, or failed over to a replica that was behind).
-- KEYS[1] dataset marker STRING  "<token>:<epoch ms written>:<looks counted>"
-- ARGV[1] the token of a new marker, written when there is none
-- Returns {1 if written now else 0, the marker after this look}.
-- Replayed: counts the look twice, which only raises the count.
local marker = redis.call('GET', KEYS[1])
local identity, looks
if marker then
  identity, looks = string.match(marker, '^(.*):(%d+)$')
end
if not identity then
  marker = ARGV[1] .. ':' .. now_ms() .. ':1'
  redis.call('SET', KEYS[1], marker)
  return {1, marker}
end
marker = identity .. ':' .. (tonumber(looks) + 1)
redis.call('SET', KEYS[1], marker)
return {0, marker}

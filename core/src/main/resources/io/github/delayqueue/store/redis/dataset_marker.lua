-- dataset_marker: reads the marker of the queue's data under a key prefix, or writes a new one when
-- it is absent. Not a transition of a message: every instance reads it every few seconds, and a
-- marker other than the one it read before (gone, so written anew) says that Redis lost the
-- queue's data (restarted without persistence, flushed, or failed over to an empty replica).
-- KEYS[1] dataset marker STRING  "<token>:<epoch ms written>"
-- ARGV[1] the token of a new marker, written when there is none
-- Returns {1 if written now else 0, the marker}.
-- Replayed: finds the marker written and returns {0, it}.
local marker = redis.call('GET', KEYS[1])
if marker then
  return {0, marker}
end
marker = ARGV[1] .. ':' .. now_ms()
redis.call('SET', KEYS[1], marker)
return {1, marker}

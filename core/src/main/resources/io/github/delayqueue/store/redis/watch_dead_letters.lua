-- watch_dead_letters: has a partition copy its dead letters into its dead-letter queue from now on
-- (see check_bury), for a listener of them; set again every few seconds while the listener runs,
-- so that a watch Redis lost comes back. Not a transition of a message.
-- KEYS[1] dead-letters watch STRING  present while the topic's dead letters are listened to
-- Returns 1 if it was absent (set now), 0 if it was present.
-- Replayed: harmless (finds it present and returns 0).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('SET', KEYS[1], '1')
return 1

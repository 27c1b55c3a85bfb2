-- watch_dead_letters: has a partition copy its dead letters into its dead-letter queue from now on
-- (see check_bury), for a listener of them. Not a transition of a message.
-- KEYS[1] dead-letters watch STRING  present while the topic's dead letters are listened to
-- Returns 1.
-- Replayed: harmless (sets it again).
redis.call('SET', KEYS[1], '1')
return 1

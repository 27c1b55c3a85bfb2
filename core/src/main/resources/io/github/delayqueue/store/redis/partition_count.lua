-- partition_count: read the number of partitions a topic's messages are spread over, kept in Redis,
-- and the change of it on its way, if any. Not a transition of a message: part of the check that
-- every application spreads a topic the same way (see begin_partition_change).
-- KEYS[1] partition count STRING  the topic's count, absent for 1
-- KEYS[2] partition change STRING "<token>:<new count>" of a change on its way; expires
-- Returns {the count, the change on its way or ''}.
-- Replayed: reads only.
return {redis.call('GET', KEYS[1]) or '1', redis.call('GET', KEYS[2]) or ''}

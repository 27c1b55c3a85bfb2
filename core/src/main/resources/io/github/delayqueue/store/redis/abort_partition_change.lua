-- abort_partition_change: forget a change of a topic's number of partitions that will not be
-- committed, once the caller put back the markers it set (see begin_partition_change).
-- KEYS[1] partition change STRING "<token>:<new count>" of a change on its way; expires
-- ARGV[1] the change record, "<token>:<new count>"
-- Returns 1 if it was recorded and is now forgotten, else 0.
-- Replayed: the second run finds nothing and returns 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0

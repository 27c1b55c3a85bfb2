-- schedule_registry: registers a recurring schedule's topic, or forgets it, and reads the registry
-- the schedule pollers look in. Not a transition of a message: the schedule itself lives in its
-- partition (save_schedule, remove_schedule).
-- KEYS[1] schedule registry HASH  name -> topic
-- ARGV[1] 'set', 'delete' or 'read'
-- ARGV[2] name ('set' and 'delete' only)
-- ARGV[3] topic ('set' only)
-- Returns the registry after the change: two values per schedule, name and topic.
-- Replayed: harmless (the same change again, then the same read).
if ARGV[1] == 'set' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif ARGV[1] == 'delete' then
  redis.call('HDEL', KEYS[1], ARGV[2])
end
return redis.call('HGETALL', KEYS[1])

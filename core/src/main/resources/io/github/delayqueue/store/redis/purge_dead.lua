-- purge_dead: delete dead-lettered messages for good, with their last errors and priorities
-- (state: dead -> gone). A message stored again under the id of a dead one keeps its own
-- priority: that is in the priorities hash, which this script does not touch.
-- KEYS[1] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[2] dead messages HASH   id -> stored message
-- KEYS[3] dead errors HASH     id -> last error
-- KEYS[4] dead priorities HASH id -> priority of dead letters that had one above 0
-- KEYS[5] partition count STRING the count marker of this partition (see partition_refusal)
-- ARGV[1] the number of partitions the caller spreads the topic over
-- ARGV[2..] ids to delete (at least one, at most 1000); ids that are not dead are left alone, an id
--           named twice counts once
-- Returns the number of messages deleted; the error DQPARTITIONS, deleting nothing, when ARGV[1] is
-- not the partition's count.
-- Replayed: idempotent (the second run finds nothing and returns 0).
-- @include expect
-- @include partition_refusal
local refused = partition_refusal(KEYS[5], ARGV[1])
if refused then
  return refused
end
local ids = {}
local seen = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  if not seen[id] and (redis.call('ZSCORE', KEYS[1], id) or redis.call('HEXISTS', KEYS[2], id) == 1) then
    ids[#ids + 1] = id
  end
  seen[id] = true
end
expect(KEYS[2], 'hash')
expect(KEYS[3], 'hash')
-- One O(1) read while no dead letter has a priority.
local prioritized = redis.call('HLEN', KEYS[4]) > 0
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HDEL', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(ids))
  if prioritized then
    redis.call('HDEL', KEYS[4], unpack(ids))
  end
end
return #ids

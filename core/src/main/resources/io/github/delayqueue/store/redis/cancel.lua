-- cancel: delete a pending message (state: scheduled or ready -> gone). A message in flight is
-- left alone. A cancelled id left in a ready list is dropped by claim. Its priority is deleted.
-- KEYS[1] messages HASH   id -> stored message
-- KEYS[2] scheduled ZSET  id scored by due time
-- KEYS[3] in-flight ZSET  id scored by lease deadline
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0
-- KEYS[5] partition count STRING the count marker of this partition (see partition_refusal)
-- ARGV[1] id
-- ARGV[2] the number of partitions the caller spreads the topic over
-- Returns 1 if the message was pending and is now gone, else 0; the error DQPARTITIONS, changing
-- nothing, when ARGV[2] is not the partition's count.
-- Replayed: the second run finds nothing and returns 0 (the message is cancelled all the same).
-- @include expect
-- @include partition_refusal
local refused = partition_refusal(KEYS[5], ARGV[2])
if refused then
  return refused
end
local id = ARGV[1]
local stored = redis.call('HEXISTS', KEYS[1], id) == 1
local inFlight = redis.call('ZSCORE', KEYS[3], id)
expect(KEYS[2], 'zset')
expect(KEYS[4], 'hash')
if not stored or inFlight then
  return 0
end
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[1], id)
redis.call('HDEL', KEYS[4], id)
return 1

-- cancel: delete a pending message (state: scheduled or ready -> gone). A message in flight is
-- left alone. A cancelled id left in the ready list is dropped by claim.
-- KEYS[1] messages HASH   id -> stored message
-- KEYS[2] scheduled ZSET  id scored by due time
-- KEYS[3] in-flight ZSET  id scored by lease deadline
-- ARGV[1] id
-- Returns 1 if the message was pending and is now gone, else 0.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 or redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
return 1

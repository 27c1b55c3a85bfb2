-- cancel: delete a pending message (state: scheduled or ready -> gone). A message in flight is
-- left alone. A cancelled id left in a ready list (or its member in the group ready set) is
-- dropped by claim. Its priority and its group are deleted.
-- The request's token is kept at least a minute once it cancelled a message, so that the same request
-- sent again (the client lost its reply and sent it after a reconnect) reports the message
-- cancelled, and never cancels a message sent again under its id meanwhile.
-- KEYS[1] messages HASH   id -> stored message
-- KEYS[2] scheduled ZSET  id scored by due time
-- KEYS[3] in-flight ZSET  id scored by lease deadline
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0
-- KEYS[5] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[6] cancels ZSET    tokens of the cancel requests that cancelled a message (and of the resume
--                         requests that resumed a paused group, see resume_group), scored by when
--                         they may be forgotten (epoch ms); expires a minute after the last. Past
--                         that time they are forgotten only while it holds 100 or more (a listpack
--                         of a few KB below that), so that a clock stepping forward seldom forgets
--                         the token of a request whose copy is on its way: only if a cancel that
--                         trims comes in between
-- KEYS[7] groups HASH      id -> group of messages sent with one
-- KEYS[8] group waits ZSET  group -> when its strict-order wait ends, and "\1<id>" -> the same for
--                          the message that waits (see retry.lua): the wait of the message
--                          cancelled ends (see wait_to_end)
-- ARGV[1] id
-- ARGV[2] the number of partitions the caller spreads the topic over
-- ARGV[3] request token: new for each cancel request, kept when it is sent again
-- Returns 1 if the message was pending and is now gone, else 0; the error DQPARTITIONS, changing
-- nothing, when ARGV[2] is not the partition's count.
-- Replayed: idempotent (the second run finds the token and returns 1, changing nothing).
-- @include expect
-- @include partition_refusal
-- @include uses_groups
-- @include end_wait
-- @include wait_to_end
local refused = partition_refusal(KEYS[5], ARGV[2])
if refused then
  return refused
end
if redis.call('ZSCORE', KEYS[6], ARGV[3]) then
  return 1
end
local id = ARGV[1]
local stored = redis.call('HEXISTS', KEYS[1], id) == 1
local inFlight = redis.call('ZSCORE', KEYS[3], id)
expect(KEYS[2], 'zset')
expect(KEYS[4], 'hash')
local grouped = uses_groups(KEYS[7])
if not stored or inFlight then
  return 0
end
local waits = wait_to_end(KEYS[8], KEYS[7], id)
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[1], id)
redis.call('HDEL', KEYS[4], id)
if grouped then
  redis.call('HDEL', KEYS[7], id)
end
end_wait(KEYS[8], waits)
local now = now_ms()
if redis.call('ZCARD', KEYS[6]) >= 100 then
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
end
redis.call('ZADD', KEYS[6], now + 60000, ARGV[3])
redis.call('PEXPIRE', KEYS[6], 60000)
return 1

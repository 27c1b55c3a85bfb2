-- promote: move messages that are due, or due within the lookahead, from the schedule to the
-- ready list of their priority, in due order (state: scheduled -> ready). Consumers hold a message
-- that is not yet due and invoke the listener at its due time. Bounded: at most ARGV[1] messages
-- per call. Also reports when the earliest lease ends, so that the broker runs expire_leases only
-- then.
-- Also tells whether the partition's count marker (see partition_refusal) holds the caller's count,
-- so that a broker learns when the topic's number of partitions changed under it. And whether a
-- ready list holds an id, so that a consumer here need not check the ready lists itself while the
-- broker's calls keep telling it (see ClaimLoop). An idle topic costs four reads (see ready_waiting).
-- KEYS[1] scheduled ZSET  id scored by due time (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer, oldest first
-- KEYS[3] in-flight ZSET  id scored by lease deadline (epoch ms); only read
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0; only read
-- KEYS[5] ready 1 LIST  ids of priority 1 waiting for a consumer, oldest first
-- KEYS[6] ready 2 LIST  the same for priority 2
-- KEYS[7] ready 3 LIST  the same for priority 3
-- KEYS[8] ready 4 LIST  the same for priority 4
-- KEYS[9] ready 5 LIST  the same for priority 5
-- KEYS[10] ready 6 LIST the same for priority 6
-- KEYS[11] ready 7 LIST the same for priority 7
-- KEYS[12] ready 8 LIST the same for priority 8
-- KEYS[13] ready 9 LIST the same for priority 9
-- KEYS[14] partition count STRING the count marker of this partition; only read
-- ARGV[1] largest number of messages to move (at most 5000)
-- ARGV[2] signal channel
-- ARGV[3] topic
-- ARGV[4] lookahead in ms: also move messages due up to this long from now (0: only due ones)
-- ARGV[5] the number of partitions the caller spreads the topic over
-- Returns {messages moved, microseconds until the next scheduled message is due (0 if already due)
--          or -1 if none, microseconds until the earliest lease ends (0 if one has) or -1 if none,
--          1 if the count marker holds ARGV[5] else 0, 1 if a ready list (KEYS[2], KEYS[5..13]) holds
--          an id after the call else 0}.
-- Replayed: harmless (moves what is due by then).
-- @include partition_refusal
-- @include push_by_priority
-- @include ready_waiting
-- @include uses_priorities
local counted = partition_refusal(KEYS[14], ARGV[5]) and 0 or 1
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local lease = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if not head[2] and not lease[2] then
  return {0, -1, -1, counted, ready_waiting(2, 4)}
end
local nowUs = now_us()
local now = math.floor(nowUs / 1000)
local moved = 0
if head[2] and tonumber(head[2]) <= now + tonumber(ARGV[4]) then
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + tonumber(ARGV[4]), 'LIMIT', 0, tonumber(ARGV[1]))
  -- Destination first: a ready list of the wrong type fails here, before anything is written.
  if uses_priorities(4) then
    push_by_priority(KEYS[2], 4, ids)
  else
    redis.call('RPUSH', KEYS[2], unpack(ids))
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - 1)
  signal(ARGV[2], 'r' .. ARGV[3])
  moved = #ids
  head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
end
local wait = -1
if head[2] then
  wait = math.max(0, tonumber(head[2]) * 1000 - nowUs)
end
local leaseWait = -1
if lease[2] then
  leaseWait = math.max(0, tonumber(lease[2]) * 1000 - nowUs)
end
return {moved, wait, leaseWait, counted, (moved > 0) and 1 or ready_waiting(2, 4)}

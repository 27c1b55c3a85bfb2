-- reschedule: give a pending message a new due time (state: scheduled or ready -> scheduled).
-- A message in flight is left alone. Wakes the brokers when it becomes the earliest due.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time
-- KEYS[3] in-flight ZSET  id scored by lease deadline
-- KEYS[4] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[5] groups HASH     id -> group of messages sent with one; only read
-- KEYS[6] group waits ZSET group -> when its strict-order wait ends, and "\1<id>" -> the same for
--                         the message that waits (see retry.lua): the wait of the message
--                         rescheduled ends (see wait_to_end)
-- ARGV[1] id
-- ARGV[2] due kind: "d" = delay in ms from Redis time, "a" = absolute epoch ms
-- ARGV[3] the delay or due time
-- ARGV[4] signal channel
-- ARGV[5] topic
-- ARGV[6] the number of partitions the caller spreads the topic over
-- A stored message whose header is unreadable is rescheduled but left as it is.
-- Returns the new due time (epoch ms), or -1 if the message is not pending; the error DQPARTITIONS,
-- changing nothing, when ARGV[6] is not the partition's count.
-- Replayed: idempotent for an absolute due time; a delay counts again from the second run.
-- @include end_wait
-- @include head_due
-- @include header
-- @include partition_refusal
-- @include schedule_and_signal
-- @include wait_to_end
-- @include with_header
local refused = partition_refusal(KEYS[4], ARGV[6])
if refused then
  return refused
end
local id = ARGV[1]
local stored = redis.call('HGET', KEYS[1], id)
local inFlight = redis.call('ZSCORE', KEYS[3], id)
local headDue = head_due(KEYS[2])
if not stored or inFlight then
  return -1
end
local waits = wait_to_end(KEYS[6], KEYS[5], id)
local due = tonumber(ARGV[3])
if ARGV[2] == 'd' then
  due = now_ms() + due
end
local attempts, _, bodyAt = header(stored)
if attempts then
  redis.call('HSET', KEYS[1], id, with_header(stored, attempts, due, bodyAt))
end
schedule_and_signal(KEYS[2], id, due, headDue, ARGV[4], ARGV[5])
end_wait(KEYS[6], waits)
return due

-- retry: a delivery failed, or its handler asked to slow down; schedule the next attempt after a
-- backoff (state: in flight -> scheduled, attempts + ARGV[6]). Wakes the brokers when it becomes the
-- earliest due.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] scheduled ZSET  id scored by due time
-- KEYS[4] leases HASH     id -> lease token
-- KEYS[5] groups HASH     id -> group of messages sent with one
-- KEYS[6] group slots HASH group -> its messages in flight (see free_slots)
-- KEYS[7] group tags HASH  the virtual time and the finish tag of each group in the rotation
-- KEYS[8] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[9] group pauses ZSET   group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] backoff in ms from Redis time
-- ARGV[4] signal channel
-- ARGV[5] topic
-- ARGV[6] attempts to count: 1 for a failure, 0 for a slow-down
-- ARGV[7] error of the failed attempt, kept as the message's "delay-queue-error" header for its
--         next delivery; '' for none (a slow-down keeps the error of the attempt before)
-- ARGV[8] 1 to pause the message's group, if it has one, until the next attempt (a slow-down of a
--         message of a group: the group waits, in every application, not the topic); absent or 0
--         otherwise. A pause that ends later (or one until resumed) is kept; the group, when in the
--         rotation, is parked there (+inf), as pause_group does.
-- A stored message whose "<attempts>:<due ms>:" header is unreadable is handled as attempts 0, and
-- one whose body is unreadable keeps its body as it is.
-- A message of a group frees its slot while it waits (free_slots): a group parked at its concurrency
-- limit rejoins the rotation and the topic's consumers are signalled.
-- Returns the due time of the next attempt (epoch ms), or -1 if the lease was lost.
-- Replayed: idempotent (the second run finds no lease and returns -1).
-- @include expect
-- @include free_slots
-- @include head_due
-- @include header
-- @include holds_lease
-- @include schedule_and_signal
-- @include slots_to_free
-- @include with_error
-- @include with_header
local id = ARGV[1]
if not holds_lease(KEYS[4], id, ARGV[2]) then
  return -1
end
local stored = redis.call('HGET', KEYS[2], id)
expect(KEYS[1], 'zset')
local freeing = slots_to_free(KEYS[5], KEYS[6], KEYS[7], KEYS[8], {id})
local headDue = head_due(KEYS[3])
-- The group to pause, read before any write, with its place in the rotation.
local pausedGroup, pausedScore
if stored and ARGV[8] == '1' then
  pausedGroup = redis.call('HGET', KEYS[5], id)
  if pausedGroup then
    pausedScore = redis.call('ZSCORE', KEYS[8], pausedGroup)
    expect(KEYS[9], 'zset')
  end
end
local due = -1
if stored then
  due = now_ms() + tonumber(ARGV[3])
  local counted = tonumber(ARGV[6])
  local attempts, _, bodyAt = header(stored)
  local updated
  if attempts then
    updated = with_header(stored, attempts + counted, due, bodyAt)
    if counted > 0 then
      local _, _, newBodyAt = header(updated)
      updated = with_error(updated, newBodyAt, ARGV[7]) or updated
    end
  else
    updated = counted .. ':' .. string.format('%.0f', due) .. ':' .. stored
  end
  redis.call('HSET', KEYS[2], id, updated)
  schedule_and_signal(KEYS[3], id, due, headDue, ARGV[4], ARGV[5])
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[4], id)
local rejoined = free_slots(freeing)
if pausedGroup then
  redis.call('ZADD', KEYS[9], 'GT', string.format('%d', due), pausedGroup)
  if pausedScore then
    redis.call('ZADD', KEYS[8], 'inf', pausedGroup)
  end
end
if rejoined and not pausedGroup then
  signal(ARGV[4], 'r' .. ARGV[5])
end
return due

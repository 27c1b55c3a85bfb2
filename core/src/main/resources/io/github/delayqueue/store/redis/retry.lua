-- retry: a delivery failed, or its handler asked to slow down; schedule the next attempt after a
-- backoff (state: in flight -> scheduled, attempts + ARGV[6]). Wakes the brokers when it becomes the
-- earliest due. A message of a group may instead wait in its group (ARGV[8] = 2, see below).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] scheduled ZSET  id scored by due time
-- KEYS[4] leases HASH     id -> lease token
-- KEYS[5] groups HASH     id -> group of messages sent with one; written only to restore a lost
--                         entry (see ARGV[8])
-- KEYS[6] group ready ZSET  ready messages of groups, see group_member
-- KEYS[7] group counts HASH group -> its members in the group ready ZSET
-- KEYS[8] group tags HASH  the virtual time and the finish tag of each group in the rotation
-- KEYS[9] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[10] group slots HASH group -> its messages in flight (see free_slots)
-- KEYS[11] group pauses ZSET group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- KEYS[12] priorities HASH id -> priority of messages sent with one above 0; only read
-- KEYS[13] group waits ZSET group -> when its strict-order wait ends (epoch ms), and "\1<id>" ->
--          the same, for the message that waits in its group (see ARGV[8] = 2)
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] backoff in ms from Redis time
-- ARGV[4] signal channel
-- ARGV[5] topic
-- ARGV[6] attempts to count: 1 for a failure, 0 for a slow-down
-- ARGV[7] error of the failed attempt, kept as the message's "delay-queue-error" header for its
--         next delivery; '' for none (a slow-down keeps the error of the attempt before)
-- ARGV[8] what a message of a group does to its group; absent or 0 for nothing:
--         1: the group waits too, until the next attempt (a slow-down: the group waits, in every
--            application, not the topic);
--         2: the message waits in its group, ready at its rank (its priority and its due time,
--            which it keeps), and the group waits until the next attempt (strict group order: no
--            later message of the group passes it; the next claim of the group after the pause
--            takes it first).
--         The group's pause is set as pause_group sets one, but a pause that ends later (or one
--         until resumed) is kept; the group, when in the rotation, is parked there (+inf).
--         With 2, the wait's end is also kept apart in KEYS[13] (the later one, when the group
--         waits already), for the group and for the message: an operator's pause or resume of the
--         group (pause_group, resume_group) never ends the group's pause before it, and a
--         replacing send (send.lua) replaces the message while it waits; a replacing send, a
--         cancel or a reschedule of it ends its wait (see wait_to_end). Waits that ended leave
--         KEYS[13] then, and when a claim finds their group's pause ended (see claim.lua).
-- A message of a group whose groups hash entry was lost is known by its body's "delay-queue-group"
-- header, as the template writes it (1 to 800 bytes, no control character, as replay.lua takes
-- one): with ARGV[8] above 0, its group waits (and, with 2, it waits in it) as above, and its entry
-- is restored. The group's slot it may hold is left to the recount (free_slots found no group).
-- A stored message whose "<attempts>:<due ms>:" header is unreadable is handled as attempts 0, and
-- one whose body is unreadable keeps its body as it is (and is scheduled, whatever ARGV[8]).
-- A message of a group frees its slot while it waits (free_slots): a group parked at its concurrency
-- limit rejoins the rotation and the topic's consumers are signalled (unless its group now waits).
-- Returns the due time of the next attempt (epoch ms), or -1 if the lease was lost.
-- Replayed: idempotent (the second run finds no lease and returns -1).
-- @include check_group_keys
-- @include collect_member
-- @include expect
-- @include free_slots
-- @include head_due
-- @include header
-- @include header_value
-- @include holds_lease
-- @include join_groups
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
local freeing = slots_to_free(KEYS[5], KEYS[10], KEYS[8], KEYS[9], {id})
local headDue = head_due(KEYS[3])
local mode = tonumber(ARGV[8]) or 0
-- The group that waits, read before any write, with its place in the rotation; and whether the
-- message waits in it (its header readable, for its rank).
local group, groupScore, holds, priority, restored
local attempts, storedDue, bodyAt
if stored then
  attempts, storedDue, bodyAt = header(stored)
end
if stored and mode > 0 then
  group = redis.call('HGET', KEYS[5], id)
  if not group and bodyAt then
    -- The entry lost: the group its body names.
    group = header_value(stored, bodyAt, 'delay-queue-group')
    if group and (#group == 0 or #group > 800 or string.find(group, '%c')) then
      -- No group's name (as replay.lua takes one).
      group = nil
    end
    restored = group
  end
  if group then
    groupScore = redis.call('ZSCORE', KEYS[9], group)
    expect(KEYS[11], 'zset')
    holds = mode == 2 and attempts ~= nil and storedDue ~= nil
    if holds then
      priority = redis.call('HGET', KEYS[12], id)
      check_group_keys(5)
      expect(KEYS[13], 'zset')
    end
  end
end
local due, now = -1, nil
if stored then
  now = now_ms()
  due = now + tonumber(ARGV[3])
  local counted = tonumber(ARGV[6])
  local updated
  if attempts then
    -- A message that waits in its group keeps its due time: its rank.
    updated = with_header(stored, attempts + counted, holds and storedDue or due, bodyAt)
    if counted > 0 then
      local _, _, newBodyAt = header(updated)
      updated = with_error(updated, newBodyAt, ARGV[7]) or updated
    end
  else
    updated = counted .. ':' .. string.format('%.0f', due) .. ':' .. stored
  end
  redis.call('HSET', KEYS[2], id, updated)
  if holds then
    local order, byGroup = {}, {}
    collect_member(order, byGroup, group, priority, storedDue, id)
    join_groups(5, order, byGroup)
  else
    schedule_and_signal(KEYS[3], id, due, headDue, ARGV[4], ARGV[5])
  end
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[4], id)
local rejoined = free_slots(freeing)
if group then
  redis.call('ZADD', KEYS[11], 'GT', string.format('%d', due), group)
  if groupScore or holds then
    redis.call('ZADD', KEYS[9], 'inf', group)
  end
  if restored then
    redis.call('HSET', KEYS[5], id, restored)
  end
  if holds then
    redis.call('ZREMRANGEBYSCORE', KEYS[13], '-inf', '(' .. string.format('%d', now))
    redis.call('ZADD', KEYS[13], 'GT', string.format('%d', due), group, string.format('%d', due), '\1' .. id)
  end
end
if rejoined and not group then
  signal(ARGV[4], 'r' .. ARGV[5])
end
return due

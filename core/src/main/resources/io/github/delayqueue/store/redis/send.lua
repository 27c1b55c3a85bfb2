-- send: store new messages and schedule them (state: none -> scheduled), or replace scheduled ones
-- (state: scheduled -> scheduled).
-- A message whose id is already stored (scheduled, ready or in flight) is left as it is. It is
-- reported as a duplicate unless the stored body is the one sent: then this is the same message
-- sent again (a client that re-sends a command whose reply it lost, or a caller retrying a send
-- that failed), and it is reported as stored, with the due time it has. A message sent to replace
-- a pending one (due kind with 'r') takes the place of a stored message that is still scheduled:
-- new body, due time and priority, its attempts kept; a ready or in-flight one is never replaced,
-- and the replacing send is then reported as a duplicate, whatever its body. But for a message
-- that waits in its group for its next attempt (strict group order, see retry.lua): ready in its
-- group only to keep its place, it is replaced as a scheduled one (and scheduled; its member left
-- in the group ready set is dropped by claim, as after a reschedule); its wait leaves KEYS[12] (see
-- wait_to_end), so that a resume of its group ends the group's pause, which otherwise lasts until
-- the wait's end.
-- Wakes the brokers when a message becomes the earliest one due. A message stored or replaced with
-- a priority above 0 gets an entry in the priorities hash; one stored or replaced without loses its
-- entry (only written while the hash is not empty, or got an entry earlier in this call). The same
-- for a group and the groups hash. A new message of a group that is already due is made ready at
-- once (state: none -> ready, in its group, see join_groups), without waiting for a broker, and
-- wakes the consumers instead; a replacing one is scheduled, as any other.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time (epoch ms)
-- KEYS[3] priorities HASH id -> priority (1 to 9) of messages sent with one above 0
-- KEYS[4] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[5] remembered ZSET ids of messages sent with a deduplication window, handled, scored by the
--         end of their window (epoch ms); written by ack
-- KEYS[6] deduplication STRING the most ids KEYS[5] keeps: set by a send with a deduplication window
--         to ARGV[4] when absent or smaller (the largest bound any sender asked for applies)
-- KEYS[7] groups HASH     id -> group of messages sent with one (see uses_groups)
-- KEYS[8] group ready ZSET  ready messages of groups, see group_member
-- KEYS[9] group counts HASH group -> its members in the group ready ZSET
-- KEYS[10] group tags HASH  the virtual time and the finish tag of each group in the rotation
-- KEYS[11] group rotation ZSET groups with ready messages, scored by finish tag
-- KEYS[12] group waits ZSET group -> when its strict-order wait ends (epoch ms), and "\1<id>" ->
--          the same for the message that waits in its group (see retry.lua); read by a replacing
--          send of a message that is not scheduled
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the number of partitions the caller spreads the topic over
-- ARGV[4] the most ids to remember, for KEYS[6]
-- ARGV[5..] four values per message: id, due kind ("d" = delay in ms from Redis time,
--           "a" = absolute epoch ms; then "r" to replace a scheduled message, "u" for a message with
--           a deduplication window (its "delay-queue-dedupe-ms" header), and the priority, 1 to 9,
--           for one above 0, e.g. "d7", "ar9" or "dru3"; then, for a message of a group, a NUL
--           and the group, e.g. "d7\0shop-17"), the delay or due time, body
-- An id that is not stored and still remembered (its message was handled within its window) is
-- not stored again. Ids whose windows have ended are forgotten first.
-- Returns two integers per message: outcome (0 stored, 1 duplicate, 2 replaced, 3 remembered), due
-- time (epoch ms; for 3, when the id stops being remembered); the error DQPARTITIONS, storing
-- nothing, when ARGV[3] is not the partition's count.
-- Replayed: idempotent (the same body again is reported as stored, changing nothing, or as
-- remembered once its message was handled within its window); a replacing
-- send again replaces what the first stored or replaced while it is still scheduled, with the same
-- body and, for an absolute due time, the same due time (a delay counts from the second run), and
-- reports it replaced; once a broker has promoted it (ready or in flight), it reports a duplicate.
-- @include check_group_keys
-- @include collect_member
-- @include decimal
-- @include end_wait
-- @include expect
-- @include group_member
-- @include head_due
-- @include header
-- @include join_groups
-- @include partition_refusal
-- @include uses_groups
-- @include uses_priorities
-- @include wait_to_end
-- The message id, stored with the header attempts and storedDue, waits in its group (strict group
-- order): its wait has not ended and its member is in the group ready set (not claimed). Reads
-- only; the group waits key's type is checked before any write.
local function waits_in_group(id, storedDue)
  local waitEnd = tonumber(redis.call('ZSCORE', KEYS[12], '\1' .. id))
  if not waitEnd or not storedDue or waitEnd <= now_ms() then
    return nil
  end
  local group = redis.call('HGET', KEYS[7], id)
  if not group then
    return nil
  end
  local member = group_member(group, redis.call('HGET', KEYS[3], id), storedDue, id)
  if not redis.call('ZSCORE', KEYS[8], member) then
    return nil
  end
  return group
end
local refused = partition_refusal(KEYS[4], ARGV[3])
if refused then
  return refused
end
local now
local headDue = head_due(KEYS[2])
local prioritized = uses_priorities(3)
-- The groups hash is read (and its type checked) only by a call that may write it: one with a
-- message of a group, or one that replaces (a message replaced without a group loses its entry).
-- A new message of no group has no entry to lose. A call with a message of a group may make it
-- ready: the group keys are checked first.
local order, byGroup = {}, {}
local withGroup, replacing = false, false
for i = 6, #ARGV, 4 do
  local kind = ARGV[i]
  withGroup = withGroup or string.find(kind, '\0', 1, true) ~= nil
  replacing = replacing or string.byte(kind, 2) == 114 -- 'r'
end
if withGroup then
  check_group_keys(7)
end
local grouped = (withGroup or replacing) and uses_groups(KEYS[7])
-- A replacing send on a topic with groups may find a message waiting in its group: what it reads
-- for that is checked before any write (a topic without groups reads nothing more).
local waitsChecked = replacing and grouped
if waitsChecked then
  if not withGroup then
    expect(KEYS[8], 'zset')
  end
  expect(KEYS[12], 'zset')
end
-- Every read that may fail comes before the first write: the bound, the ids still remembered.
local bound = redis.call('GET', KEYS[6])
local rememberedUntil = {}
-- Only a topic with a bound remembers ids: one without pays this GET only.
local remembering = bound and redis.call('EXISTS', KEYS[5]) == 1
if remembering then
  now = now_ms()
  local ids = {}
  for i = 5, #ARGV, 4 do
    ids[#ids + 1] = ARGV[i]
  end
  local scores = redis.call('ZMSCORE', KEYS[5], unpack(ids))
  for k, id in ipairs(ids) do
    local score = tonumber(scores[k])
    if score and score > now then
      rememberedUntil[id] = score
    end
  end
end
local deduplicating = false
local earliest
local out = {}
for i = 5, #ARGV, 4 do
  local id = ARGV[i]
  local due = tonumber(ARGV[i + 2])
  local kind = ARGV[i + 1]
  local group
  local nul = string.find(kind, '\0', 1, true)
  if nul then
    group = string.sub(kind, nul + 1)
    kind = string.sub(kind, 1, nul - 1)
  end
  if string.byte(kind, 1) == 100 then -- 'd'
    now = now or now_ms()
    due = now + due
  end
  deduplicating = deduplicating or string.find(kind, 'u', 2, true) ~= nil
  -- 0: stored, 2: replaced (both scheduled at due), nil: left as it is
  local outcome = 0
  if rememberedUntil[id] and redis.call('HEXISTS', KEYS[1], id) == 0 then
    out[#out + 1] = 3
    out[#out + 1] = rememberedUntil[id]
    outcome = nil
  elseif redis.call('HSETNX', KEYS[1], id, '0:' .. string.format('%.0f', due) .. ':' .. ARGV[i + 3]) == 0 then
    local stored = redis.call('HGET', KEYS[1], id)
    local attempts, storedDue, bodyAt = header(stored)
    local replacing = string.byte(kind, 2) == 114 -- 'r'
    local scheduled = replacing and bodyAt and redis.call('ZSCORE', KEYS[2], id)
    local waitingIn = replacing and waitsChecked and bodyAt and not scheduled
      and waits_in_group(id, storedDue)
    if scheduled or waitingIn then
      redis.call('HSET', KEYS[1], id, attempts .. ':' .. string.format('%.0f', due) .. ':' .. ARGV[i + 3])
      if waitingIn then
        end_wait(KEYS[12], wait_to_end(KEYS[12], KEYS[7], id))
      end
      outcome = 2
    else
      -- The same body again is a re-sent request, unless it was to replace a scheduled message.
      local same = not replacing and bodyAt and string.sub(stored, bodyAt + 1) == ARGV[i + 3]
      out[#out + 1] = same and 0 or 1
      out[#out + 1] = storedDue or 0
      outcome = nil
    end
  end
  if outcome then
    -- A priority is a digit after the kind ('d', 'a', 'r'): only longer kinds may carry one.
    local priority = #kind > 1 and tonumber(string.sub(kind, -1))
    if priority then
      redis.call('HSET', KEYS[3], id, priority)
      -- A later message of this call with the same id must find the entry to drop it.
      prioritized = true
    elseif prioritized then
      redis.call('HDEL', KEYS[3], id)
    end
    if group then
      redis.call('HSET', KEYS[7], id, group)
      grouped = true
    elseif grouped then
      redis.call('HDEL', KEYS[7], id)
    end
    if group and outcome == 0 then
      now = now or now_ms()
    end
    if group and outcome == 0 and due <= now then
      collect_member(order, byGroup, group, priority, due, id)
    else
      redis.call('ZADD', KEYS[2], due, id)
      if not earliest or due < earliest then
        earliest = due
      end
    end
    out[#out + 1] = outcome
    out[#out + 1] = due
  end
end
if remembering then
  -- Ids whose windows have ended are forgotten.
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
end
if deduplicating and (not bound or (decimal(bound) or 0) < tonumber(ARGV[4])) then
  redis.call('SET', KEYS[6], ARGV[4])
end
if #order > 0 then
  join_groups(7, order, byGroup)
  signal(ARGV[1], 'r' .. ARGV[2])
end
if earliest and (not headDue or earliest < headDue) then
  signal(ARGV[1], 'b' .. ARGV[2])
end
return out

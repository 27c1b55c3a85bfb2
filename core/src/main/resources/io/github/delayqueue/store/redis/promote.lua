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
-- KEYS[15] groups HASH       id -> group of messages sent with one (see uses_groups); only read
-- KEYS[16] group ready ZSET  ready messages of groups, see group_member
-- KEYS[17] group counts HASH group -> its members in the group ready ZSET
-- KEYS[18] group tags HASH   the virtual time and the finish tag of each group in the rotation
-- KEYS[19] group rotation ZSET groups with ready messages, scored by finish tag
-- ARGV[1] largest number of messages to move (at most 5000)
-- ARGV[2] signal channel
-- ARGV[3] topic
-- ARGV[4] lookahead in ms: also move messages due up to this long from now (0: only due ones)
-- ARGV[5] the number of partitions the caller spreads the topic over
-- A message of a group is moved only once due, never within the lookahead (a consumer never holds
-- one early), into the group ready ZSET; its group joins the rotation (see join_groups). While the
-- next scheduled message is such an early one, the wait reported counts half the lookahead more,
-- as the broker wakes half a lookahead before the wait: it wakes at the message's due time.
-- Returns {messages moved, microseconds until the next scheduled message is due (0 if already due)
--          or -1 if none, microseconds until the earliest lease ends (0 if one has) or -1 if none,
--          1 if the count marker holds ARGV[5] else 0, 1 if a ready list (KEYS[2], KEYS[5..13]) holds
--          an id after the call else 0}.
-- Replayed: harmless (moves what is due by then).
-- @include check_group_keys
-- @include collect_member
-- @include join_groups
-- @include partition_refusal
-- @include push_by_priority
-- @include ready_waiting
-- @include uses_groups
-- @include uses_priorities
local counted = partition_refusal(KEYS[14], ARGV[5]) and 0 or 1
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local lease = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if not head[2] and not lease[2] then
  return {0, -1, -1, counted, ready_waiting(2, 4, 16)}
end
local nowUs = now_us()
local now = math.floor(nowUs / 1000)
local moved = 0
local lookahead = tonumber(ARGV[4])
local grouped = uses_groups(KEYS[15])
if head[2] and tonumber(head[2]) <= now + lookahead and not grouped then
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + lookahead, 'LIMIT', 0, tonumber(ARGV[1]))
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
elseif head[2] and tonumber(head[2]) <= now + lookahead then
  local found = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now + lookahead, 'WITHSCORES', 'LIMIT', 0,
    tonumber(ARGV[1]))
  local all = {}
  for k = 1, #found, 2 do
    all[#all + 1] = found[k]
  end
  local groups = redis.call('HMGET', KEYS[15], unpack(all))
  local ids, groupedIds, order, byGroup = {}, {}, {}, {}
  local priorities = uses_priorities(4) and redis.call('HMGET', KEYS[4], unpack(all)) or {}
  -- Whether the ids moved are the schedule's first ones (none left before one moved): then one
  -- ZREMRANGEBYRANK removes them, as without groups.
  local skipped, prefix = false, true
  for k, id in ipairs(all) do
    local due = tonumber(found[2 * k])
    local group = groups[k]
    if not group or due <= now then
      prefix = prefix and not skipped
      if not group then
        ids[#ids + 1] = id
      else
        groupedIds[#groupedIds + 1] = id
        collect_member(order, byGroup, group, priorities[k], due, id)
      end
    else
      skipped = true
    end
  end
  -- Destinations first: every key written is checked before the first write.
  check_group_keys(15)
  if #ids > 0 then
    if uses_priorities(4) then
      push_by_priority(KEYS[2], 4, ids)
    else
      redis.call('RPUSH', KEYS[2], unpack(ids))
    end
  end
  if #order > 0 then
    join_groups(15, order, byGroup)
  end
  moved = #ids + #groupedIds
  if prefix and moved > 0 then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, moved - 1)
  else
    for first = 1, #ids, 1000 do
      redis.call('ZREM', KEYS[1], unpack(ids, first, math.min(first + 999, #ids)))
    end
    for first = 1, #groupedIds, 1000 do
      redis.call('ZREM', KEYS[1], unpack(groupedIds, first, math.min(first + 999, #groupedIds)))
    end
  end
  if moved > 0 then
    signal(ARGV[2], 'r' .. ARGV[3])
  end
  head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
end
local wait = -1
if head[2] then
  wait = math.max(0, tonumber(head[2]) * 1000 - nowUs)
  if grouped and tonumber(head[2]) > now and redis.call('HEXISTS', KEYS[15], head[1]) == 1 then
    wait = wait + lookahead * 500
  end
end
local leaseWait = -1
if lease[2] then
  leaseWait = math.max(0, tonumber(lease[2]) * 1000 - nowUs)
end
return {moved, wait, leaseWait, counted, (moved > 0) and 1 or ready_waiting(2, 4, 16)}

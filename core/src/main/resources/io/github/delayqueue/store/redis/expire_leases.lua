-- expire_leases: take back messages whose consumer died or hung past its lease
-- (state: in flight -> ready, at the tail of the ready list of its priority, or back in its group
-- at its rank, attempts + 1; or in
-- flight -> dead once attempts reach the maximum, its priority moved to the dead priorities).
-- A message made ready again carries "lease expired on attempt <n> of <max>" as its
-- "delay-queue-error" header, the previous error of its next delivery. While the topic's dead
-- letters are listened to, a dead letter is copied into its dead-letter queue, ready at once with its
-- priority, and its consumers are signalled. After a burial, the oldest dead letters beyond the topic's retention
-- are deleted (at most 100).
-- Bounded: at most ARGV[1] messages per call.
-- KEYS[1] in-flight ZSET       id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH        id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] ready LIST           ids waiting for a consumer
-- KEYS[4] dead ZSET            id scored by the time it died
-- KEYS[5] dead messages HASH   id -> stored message
-- KEYS[6] dead errors HASH     id -> last error
-- KEYS[7] leases HASH          id -> lease token
-- KEYS[8] priorities HASH    id -> priority of stored messages sent with one above 0
-- KEYS[9] ready 1 LIST       ids of priority 1 waiting for a consumer, oldest first
-- KEYS[10] ready 2 LIST      the same for priority 2
-- KEYS[11] ready 3 LIST      the same for priority 3
-- KEYS[12] ready 4 LIST      the same for priority 4
-- KEYS[13] ready 5 LIST      the same for priority 5
-- KEYS[14] ready 6 LIST      the same for priority 6
-- KEYS[15] ready 7 LIST      the same for priority 7
-- KEYS[16] ready 8 LIST      the same for priority 8
-- KEYS[17] ready 9 LIST      the same for priority 9
-- KEYS[18] dead priorities HASH id -> priority of dead letters that had one above 0
-- KEYS[19] dead-letters watch STRING    present while the topic's dead letters are listened to
-- KEYS[20] dead-letters messages HASH  the dead-letter queue's stored messages
-- KEYS[21] dead-letters ready LIST     the dead-letter queue's ready ids
-- KEYS[22] dead-letters priorities HASH the dead-letter queue's priorities of its messages
-- KEYS[23] dead-letters ready 1 LIST   the dead-letter queue's ready ids of priority 1
-- KEYS[24] dead-letters ready 2 LIST   the same for priority 2
-- KEYS[25] dead-letters ready 3 LIST   the same for priority 3
-- KEYS[26] dead-letters ready 4 LIST   the same for priority 4
-- KEYS[27] dead-letters ready 5 LIST   the same for priority 5
-- KEYS[28] dead-letters ready 6 LIST   the same for priority 6
-- KEYS[29] dead-letters ready 7 LIST   the same for priority 7
-- KEYS[30] dead-letters ready 8 LIST   the same for priority 8
-- KEYS[31] dead-letters ready 9 LIST   the same for priority 9
-- KEYS[32] groups HASH       id -> group of messages sent with one (see uses_groups)
-- KEYS[33] group ready ZSET  ready messages of groups, see group_member
-- KEYS[34] group counts HASH group -> its members in the group ready ZSET
-- KEYS[35] group tags HASH   the virtual time and the finish tag of each group in the rotation
-- KEYS[36] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[37] group slots HASH  group -> its messages in flight (see free_slots)
-- ARGV[1] largest number of messages to take back (at most 5000)
-- ARGV[2] maximum attempts of the topic
-- ARGV[3] signal channel
-- ARGV[4] topic
-- ARGV[5] signal channel of the dead-letter queue
-- ARGV[6] the dead-letter queue's name (the topic's, then "#dead")
-- ARGV[7] the most dead letters the dead set keeps, 0 for no bound (retention, see trim_dead)
-- ARGV[8] ms a dead letter is kept, 0 for no bound
-- ARGV[9] 1 if the caller listens to the topic's dead letters (sets a lost watch again), else 0
-- A message whose stored header is unreadable is dead-lettered as corrupt.
-- The messages of groups free their slots (free_slots): a group parked at its concurrency limit
-- rejoins the rotation and the topic's consumers are signalled.
-- Returns {messages made ready again, messages dead-lettered, ms until the next lease ends or -1,
--          then the ids made ready again, then the ids dead-lettered}.
-- Replayed: harmless (takes back what has expired by then).
-- @include bury
-- @include check_bury
-- @include check_group_keys
-- @include collect_member
-- @include expect
-- @include free_slots
-- @include header
-- @include join_groups
-- @include ready_list
-- @include slots_to_free
-- @include trim_dead
-- @include uses_groups
-- @include uses_priorities
-- @include with_error
-- @include with_header
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local maxAttempts = tonumber(ARGV[2])
local requeued = {}
local dead = {}
if #ids > 0 then
  local stored = redis.call('HMGET', KEYS[2], unpack(ids))
  expect(KEYS[3], 'list')
  local priorities = {}
  if uses_priorities(8) then
    priorities = redis.call('HMGET', KEYS[8], unpack(ids))
    for i = 1, #ids do
      expect(ready_list(KEYS[3], 8, priorities[i]), 'list')
    end
  end
  expect(KEYS[7], 'hash')
  local groups = {}
  if uses_groups(KEYS[32]) then
    groups = redis.call('HMGET', KEYS[32], unpack(ids))
    check_group_keys(32)
  end
  local freeing = slots_to_free(KEYS[32], KEYS[37], KEYS[35], KEYS[36], ids)
  local order, byGroup = {}, {}
  local deadKeys = check_bury(KEYS[4], KEYS[5], KEYS[6], KEYS[18], KEYS[19], KEYS[20], KEYS[21], KEYS[22], 23,
    ARGV[9])
  -- The ids dead-lettered with a priority, to drop from the priorities hash.
  local buriedPriorities = {}
  local buriedGroups = {}
  for i, id in ipairs(ids) do
    if stored[i] then
      local attempts, due, bodyAt = header(stored[i])
      local updated, err
      if not attempts then
        updated, err = stored[i], 'stored message is corrupt: unreadable header'
      elseif attempts + 1 >= maxAttempts then
        updated = with_header(stored[i], attempts + 1, due, bodyAt)
        err = 'lease expired on attempt ' .. (attempts + 1) .. ' of ' .. maxAttempts
      end
      if updated then
        bury(deadKeys, id, updated, err, priorities[i], now)
        redis.call('HDEL', KEYS[2], id)
        if priorities[i] then
          buriedPriorities[#buriedPriorities + 1] = id
        end
        if groups[i] then
          buriedGroups[#buriedGroups + 1] = id
        end
        dead[#dead + 1] = id
      else
        local requeuedMessage = with_header(stored[i], attempts + 1, due, bodyAt)
        local _, _, newBodyAt = header(requeuedMessage)
        requeuedMessage = with_error(requeuedMessage, newBodyAt,
          'lease expired on attempt ' .. (attempts + 1) .. ' of ' .. maxAttempts) or requeuedMessage
        redis.call('HSET', KEYS[2], id, requeuedMessage)
        local group = groups[i]
        if group then
          collect_member(order, byGroup, group, priorities[i], due, id)
        else
          redis.call('RPUSH', ready_list(KEYS[3], 8, priorities[i]), id)
        end
        requeued[#requeued + 1] = id
      end
    end
  end
  if #order > 0 then
    join_groups(32, order, byGroup)
  end
  if #buriedPriorities > 0 then
    redis.call('HDEL', KEYS[8], unpack(buriedPriorities))
  end
  if #buriedGroups > 0 then
    redis.call('HDEL', KEYS[32], unpack(buriedGroups))
  end
  if #dead > 0 then
    trim_dead(deadKeys, tonumber(ARGV[7]), tonumber(ARGV[8]), now)
  end
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HDEL', KEYS[7], unpack(ids))
  if free_slots(freeing) and #requeued == 0 then
    signal(ARGV[3], 'r' .. ARGV[4])
  end
  if deadKeys.copied then
    signal(ARGV[5], 'r' .. ARGV[6])
  end
end
if #requeued > 0 then
  signal(ARGV[3], 'r' .. ARGV[4])
end
local nextLease = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if nextLease[2] then
  wait = math.max(0, tonumber(nextLease[2]) - now)
end
local out = {#requeued, #dead, wait}
for _, id in ipairs(requeued) do
  out[#out + 1] = id
end
for _, id in ipairs(dead) do
  out[#out + 1] = id
end
return out

-- stats: count a topic's messages in each state and find its next and oldest waiting due times,
-- for the operations endpoint and the health check. Reads only: changes no state.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time (epoch ms)
-- KEYS[3] ready LIST      ids waiting for a consumer, oldest first
-- KEYS[4] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[5] dead ZSET       id scored by the time it died (epoch ms)
-- KEYS[6] priorities HASH id -> priority of messages sent with one above 0
-- KEYS[7] ready 1 LIST ids of priority 1 waiting for a consumer, oldest first
-- KEYS[8] ready 2 LIST the same for priority 2
-- KEYS[9] ready 3 LIST the same for priority 3
-- KEYS[10] ready 4 LIST the same for priority 4
-- KEYS[11] ready 5 LIST the same for priority 5
-- KEYS[12] ready 6 LIST the same for priority 6
-- KEYS[13] ready 7 LIST the same for priority 7
-- KEYS[14] ready 8 LIST the same for priority 8
-- KEYS[15] ready 9 LIST the same for priority 9
-- KEYS[16] remembered ZSET ids of handled messages remembered for their deduplication window
-- KEYS[17] groups HASH       id -> group of messages sent with one; only read
-- KEYS[18] group ready ZSET  ready messages of groups, see group_member; only read
-- KEYS[19] group counts HASH group -> its members in the group ready ZSET; only read
-- KEYS[20] group tags HASH   the virtual time and the finish tag of each group; only read
-- KEYS[21] group rotation ZSET groups with ready messages, scored by finish tag; only read
-- KEYS[22] group slots HASH  group -> its messages in flight; only read
-- KEYS[23] group pauses ZSET group -> when its pause ends (epoch ms; +inf: when resumed); only read
-- ARGV[1] most ids at the head of each ready list to look at for the oldest ready message (ids
--         left there by cancel or reschedule are passed over); the groups' ready messages are
--         looked at as said below
-- Returns {Redis time (epoch ms), stored messages, scheduled, in flight, dead,
--          due time of the earliest scheduled message or -1, due time of the oldest ready message or -1,
--          ids remembered (those whose window ended included, until a send forgets them),
--          groups with ready messages, then the number k of the busiest groups that follow (up to
--          10) and k pairs group, its ready messages (most first, ties by name; read from the first
--          2,000 groups of the counts), then the number m of the groups with the most messages in
--          flight that follow (up to 10) and m pairs group, its messages in flight (the same way,
--          from the first 2,000 groups of the group slots), then the number of paused groups
--          (pauses not ended), the number j of those that follow (up to 10) and j pairs group, when
--          its pause ends (epoch ms; 0 for one until resumed), those ending first first},
--          then, while the topic uses priorities (its priorities hash or a ready list of a priority
--          exists, as claim reads them, see ready_lists), the length of the ready list of each
--          priority from 1 to 9 (ids that claim will drop included).
-- Ready messages are the stored ones neither scheduled nor in flight: stored - scheduled - in flight
-- (those of paused groups included).
-- @include body_priority
-- @include bounded_hget
-- @include expect
-- @include header
-- @include ready_lists
local now = now_ms()
-- One read, as ready_lists: the priorities hash or a ready list of a priority exists.
local prioritized = redis.call('EXISTS', unpack(KEYS, 6, 15)) > 0
if prioritized then
  -- Read below for the lists' ids: a hash of the wrong type fails the call whatever is ready.
  expect(KEYS[6], 'hash')
end
local nextDue = -1
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if head[2] then
  nextDue = tonumber(head[2])
end
local oldestReady = -1
-- Whether a stored id waits for a consumer: neither scheduled again nor in flight.
local function waiting(id)
  return not redis.call('ZSCORE', KEYS[2], id) and not redis.call('ZSCORE', KEYS[4], id)
end
local function seen_ready(due)
  if oldestReady < 0 or due < oldestReady then
    oldestReady = due
  end
end
-- The first waiting id of each ready list that claim would take there: while the topic uses
-- priorities, one whose message has the list's priority (its entry, or its body's header when it has
-- none, as claim reads it); a copy left on another list by a cancel or reschedule is passed over.
local lists, listPriorities = ready_lists(KEYS[3], 6)
for l, list in ipairs(lists) do
  for _, id in ipairs(redis.call('LRANGE', list, 0, tonumber(ARGV[1]) - 1)) do
    if waiting(id) then
      local stored = redis.call('HGET', KEYS[1], id)
      local _, due
      if stored then
        _, due = header(stored)
      end
      if due and listPriorities then
        local entry = tonumber(redis.call('HGET', KEYS[6], id))
        local priority = entry or 0
        if not entry and listPriorities[l] > 0 and body_priority(stored) == listPriorities[l] then
          priority = listPriorities[l]
        end
        if priority ~= listPriorities[l] then
          due = nil
        end
      end
      if due then
        seen_ready(due)
        break
      end
    end
  end
end
-- The groups: the oldest ready message of each of the first 1000 groups of the rotation (those
-- served next), among the first members of each rank of priority (a member left by a cancel or
-- reschedule is passed over), 1000 reads of the group ready set and 1000 members in all. A paused
-- group's messages are held back on purpose: they are passed over.
-- Each rank (priority) is read apart while the topic uses priorities; else rank 9 (priority 0) as
-- before, and a group with none ready there is read once more across all its ranks: with the
-- priorities hash lost and no ready list of a priority left, the members of the lowest rank present
-- give the group's time (maybe later than its oldest, never none). A member whose message has
-- another due time now (left by a cancel or reschedule, see group_member) is passed over; a
-- message longer than 1 KiB is not read for it (its member counts; the check costs one O(1) read
-- more then, and one read of up to 1 KiB else).
local budget, reads = 1000, 1000
local ranks = prioritized and {0, 1, 2, 3, 4, 5, 6, 7, 8, 9} or {9, false}
local pauses = redis.call('EXISTS', KEYS[23]) == 1
-- The due time of the first member of the range whose message is ready with that due time, or nil.
local function first_ready(group, from, to)
  reads = reads - 1
  local members = (budget > 0 and reads >= 0) and redis.call('ZRANGEBYLEX', KEYS[18], from, to, 'LIMIT', 0,
    math.min(budget, 10)) or {}
  for _, member in ipairs(members) do
    budget = budget - 1
    local id = string.sub(member, #group + 17)
    local due = tonumber(string.sub(member, #group + 3, #group + 15))
    local stored = due and waiting(id) and bounded_hget(KEYS[1], id, 1024)
    local _, storedDue
    if stored and stored ~= '' then
      _, storedDue = header(stored)
    end
    if stored and (stored == '' or (storedDue and math.max(0, storedDue) == due)) then
      return due
    end
  end
end
for _, group in ipairs(redis.call('ZRANGE', KEYS[21], 0, 999)) do
  local pausedUntil = pauses and tonumber(redis.call('ZSCORE', KEYS[23], group))
  if not (pausedUntil and pausedUntil > now) then
    for _, rank in ipairs(ranks) do
      local due
      if rank then
        due = first_ready(group, '[' .. group .. '\0' .. rank, '(' .. group .. '\0' .. string.char(49 + rank))
      else
        due = first_ready(group, '[' .. group .. '\0', '(' .. group .. '\1')
      end
      if due then
        seen_ready(due)
        if not prioritized then
          break
        end
      end
    end
  end
end
local out = {now, redis.call('HLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]), nextDue, oldestReady, redis.call('ZCARD', KEYS[16])}
-- The busiest groups: from all counts up to 2,000 groups, else from one HSCAN's worth; the ten
-- with the most kept as they are read (a count of 0 or less passed over).
local function busiest(hash, size)
  local counts = {}
  if size > 0 then
    local entries = (size <= 2000) and redis.call('HGETALL', hash) or redis.call('HSCAN', hash, 0, 'COUNT', 2000)[2]
    for k = 1, #entries, 2 do
      -- A count Redis could not return as a whole number (inf, 1e30, nan) is passed over too.
      local count = tonumber(entries[k + 1]) or 0
      local entry = {entries[k], (count < 2 ^ 53) and count or 0}
      local at = #counts + 1
      while at > 1 and (counts[at - 1][2] < entry[2] or (counts[at - 1][2] == entry[2] and counts[at - 1][1] > entry[1])) do
        at = at - 1
      end
      if at <= 10 and entry[2] > 0 then
        table.insert(counts, at, entry)
        counts[11] = nil
      end
    end
  end
  out[#out + 1] = #counts
  for k = 1, #counts do
    out[#out + 1] = counts[k][1]
    out[#out + 1] = counts[k][2]
  end
end
local groupCount = redis.call('HLEN', KEYS[19])
out[#out + 1] = groupCount
busiest(KEYS[19], groupCount)
busiest(KEYS[22], redis.call('HLEN', KEYS[22]))
-- The paused groups: two reads while some group is paused, one while none is.
if pauses then
  out[#out + 1] = redis.call('ZCOUNT', KEYS[23], '(' .. now, '+inf')
  local first = redis.call('ZRANGEBYSCORE', KEYS[23], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 10)
  out[#out + 1] = #first / 2
  for k = 1, #first, 2 do
    local ends = tonumber(first[k + 1])
    out[#out + 1] = first[k]
    out[#out + 1] = (ends == math.huge) and 0 or ends
  end
else
  out[#out + 1] = 0
  out[#out + 1] = 0
end
if prioritized then
  for priority = 1, 9 do
    out[#out + 1] = redis.call('LLEN', KEYS[6 + priority])
  end
end
return out

-- claim: lease ready messages to a consumer (state: ready -> in flight).
-- Reads the ready lists, most urgent first (those of priorities 9 down to 1 that are not empty,
-- then the ready list; only the ready list while the topic uses no priority), each from its head
-- in chunks, and decides for each id:
-- * dropped: left there by cancel or reschedule (no stored message, or scheduled again), already
--   in flight, or twice in this call; never delivered twice; while the topic uses priorities, also
--   an id whose message has another priority than the list's (left there by a cancel or reschedule
--   while ready, then sent again with another priority: it has an entry in the list of its own);
--   one without an entry in the priorities hash found in the list of a priority is that list's
--   when its body's "delay-queue-priority" header names that priority, as the template writes it
--   (the hash lost or moved aside: taken, never stranded; the lists of priorities are read while
--   one exists, see ready_lists; a member of a group in the group ready set alike);
-- * taken: due, while fewer than ARGV[1] due ones are taken; or made ready by the broker's
--   lookahead before its due time, while fewer than ARGV[3] such ones are taken (the consumer holds
--   it and invokes the listener at its due time);
-- * kept: not yet due when ARGV[3] such ones are taken already; it stays at the head, in order,
--   and due ids behind it are still taken.
-- Groups: while a group has ready messages (the group ready set is not empty), the claim serves
-- the rotation instead, by deficit round robin: the group with the lowest finish tag (the messages
-- of no group, in the ready lists, count as one more group, "", while a list holds an id) takes up
-- to 16 due messages (16 × its weight, ARGV[8..]), most urgent first (see group_member); its tag
-- grows by what it took (divided by its weight), and the
-- topic's virtual time becomes the tag it started from; then the next, until ARGV[1] are taken. A
-- group gets no credit for time away: it joins at its tag or the virtual time, whichever is later
-- (join_groups). A member is dropped when its message is not stored, scheduled again, in flight,
-- in another group or of another rank (left by a cancel, a reschedule or a second promote); a
-- message without an entry in the groups hash (the hash was lost) counts as the member's group's.
-- The ready lists and the groups each look at 1000 ids at most a call, so ids not yet due kept at
-- the lists' head never hold the groups back; a turn of the lists that takes no due message ends
-- their turns in the call. An id
-- in a ready list whose message has a group (made ready there by a version without groups during
-- a rolling upgrade) joins its group once due: its entry is dropped and its member added to the
-- group ready set (join_groups), so that it is claimed in its group's turn, within its limit, its
-- pause and its order (the reply says more may be waiting); one not yet due is kept at the head
-- until it is; while its member is in the group ready set already (the entry was left by a cancel
-- before the message was sent again with a group), the entry is dropped and the member serves
-- it. A group
-- whose members are all taken or dropped leaves the rotation, its tag and its count; the count of
-- one served is set from the set (ZLEXCOUNT), so a count that drifted is set right. An empty
-- rotation while the set is not is rebuilt from the set; one with fewer groups than the counts name
-- gets the missing ones back. A claim that served every group it read while more are in the
-- rotation (it reads the first ARGV[1] + 16 of them, at most 100: a group takes one message at
-- least in its turn) says more may be waiting.
-- Group slots: each message of a group taken counts in its group's slots (the group slots HASH,
-- freed by ack, retry, dead letter, an expired lease and a hand-back, see free_slots), one taken
-- from a ready list too (its group read from the groups hash while the topic has messages of
-- groups: one whose stored header cannot be read, so that it cannot join its group). With a group
-- concurrency (ARGV[7]), a group takes no more than its free slots; a group with none left is parked:
-- it stays in the rotation scored +inf, its tag kept in the tags, passed over by every claim until a
-- slot of it is freed (free_slots puts it back at its tag).
-- Paused groups (the group pauses ZSET, see pause_group): one read of its head while the topic
-- has grouped ready messages. A group of the rotation's head whose pause has not ended is passed
-- over and parked (+inf, as at its limit: a freed slot or a promote may have put it back); up to
-- 100 pauses that ended leave the pauses, and those groups, when parked with ready messages, rejoin
-- the rotation at their tag (or the virtual time, whichever is later), to be served by the next
-- claim: the reply then says more may be waiting.
-- Lost pauses: a claim without a group concurrency that finds the pauses empty while the topic has
-- grouped ready messages puts back the groups parked in the rotation (+inf), at their tag (or the
-- virtual time, whichever is later), to be served by the next claim (the reply says more may be
-- waiting): without a limit only a pause or a pace (both in the pauses) parks a group, so the
-- pauses key was lost (deleted, evicted, moved aside as of the wrong type) and nothing else would
-- end the wait. Those the rotation's head shows, else (the head full and ending before them) up to
-- 1000 read past it: one read more, in that case only. A claim with a group concurrency leaves them
-- to the slots recount (recount_slots), as a group parked at a limit is not stranded. A group whose
-- strict-order wait (KEYS[26]) has not ended stays parked and gets its pause back until the wait's
-- end (its waiting message keeps its backoff). Should a pause
-- be kept again before that claim (another group paused, or waiting for a strict retry), they wait
-- until the pauses are empty again (or the recount, or their resume).
-- The call ends when ARGV[1] due messages are taken (the next due id stays), the last list ends,
-- or 1000 ids were looked at in all; then it reports whether more may be waiting.
-- Every write comes after every read, so a key of the wrong type fails the call before it changes
-- anything.
-- KEYS[1] ready LIST          ids waiting for a consumer
-- KEYS[2] in-flight ZSET      id scored by lease deadline (epoch ms)
-- KEYS[3] messages HASH       id -> "<attempts>:<due ms>:<body>"
-- KEYS[4] scheduled ZSET      id scored by due time
-- KEYS[5] leases HASH         id -> lease token of the claim that holds it
-- KEYS[6] claim record STRING this consumer's last claim that leased messages, to answer a replay
--                             of it; replaced by its next claim, deleted by its next claim that
--                             leases nothing, and expires with the lease
-- KEYS[7] rate window ZSET    a rate-limited topic's claims of the last period, scored by claim
--                             time (epoch µs); untouched without a rate limit
-- KEYS[8] priorities HASH  id -> priority of messages sent with one above 0
-- KEYS[9] ready 1 LIST     ids of priority 1 waiting for a consumer, oldest first
-- KEYS[10] ready 2 LIST    the same for priority 2
-- KEYS[11] ready 3 LIST    the same for priority 3
-- KEYS[12] ready 4 LIST    the same for priority 4
-- KEYS[13] ready 5 LIST    the same for priority 5
-- KEYS[14] ready 6 LIST    the same for priority 6
-- KEYS[15] ready 7 LIST    the same for priority 7
-- KEYS[16] ready 8 LIST    the same for priority 8
-- KEYS[17] ready 9 LIST    the same for priority 9
-- KEYS[18] groups HASH       id -> group of messages sent with one (see uses_groups); only read
-- KEYS[19] group ready ZSET  ready messages of groups, see group_member
-- KEYS[20] group counts HASH group -> its members in the group ready ZSET
-- KEYS[21] group tags HASH   the virtual time, and the finish tag of each group in the rotation
-- KEYS[22] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[23] group slots HASH  group -> its messages in flight
-- KEYS[24] group pauses ZSET group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- KEYS[25] group rates ZSET  group -> when its next message is on time under the per-group rate
--                             limit (epoch µs); untouched without one
-- KEYS[26] group waits ZSET  group -> when its strict-order wait ends (epoch ms), see retry; read
--                             only for groups found parked with no pause kept (see Lost pauses);
--                             the waits that ended leave it when a claim finds pauses that ended
-- ARGV[1] largest number of due messages to claim (at most 1000)
-- ARGV[2] lease length in ms
-- ARGV[3] largest number of messages not yet due to claim
-- ARGV[4] lease token: new for each claim request of the consumer, kept when it re-sends one
-- ARGV[5] rate limit: most messages claimed in any window of ARGV[6] ms by all consumers
--         together (then none is taken before it is due); absent for a topic without one, whose
--         claims then run no command more
-- ARGV[6] rate limit period in ms (only with ARGV[5])
-- ARGV[7] group concurrency: most messages of one group in flight at once; absent for no limit
--         (ARGV[5] and ARGV[6] are then empty without a rate limit), empty when more follows
-- ARGV[8] per-group rate limit: most messages of one group claimed in any window of ARGV[9] ms,
--         by all consumers together; empty or absent for none. A group's messages start at least
--         ARGV[9] / ARGV[8] ms apart (a leaky bucket, no bursts; above about 200 a second for a
--         second, (ARGV[9] + 5 ms) / ARGV[8] apart, each claimed up to 5 ms before its start); its
--         pace, when its next message is on time, is kept in KEYS[25]; a group whose next message
--         is not yet on time is paused in KEYS[24] until it is (a longer pause is kept) and
--         parked, as a paused group is
-- ARGV[9] per-group rate limit period in ms (only with ARGV[8])
-- ARGV[10..] weights of groups: group, weight (a whole number, 1 to 100), group, weight ...; a
--         group not named weighs 1, as the messages of no group do. A group of weight w takes up
--         to 16 × w messages a turn, and its tag grows by what it took divided by w
-- Returns {lease deadline (epoch ms), claim time (epoch µs), 1 if more ids may be waiting else 0,
--          id, stored message, id, stored message, ...}; {0, 0, 0} when the ready lists are empty,
--          {0, 0, 1} when it only parked the groups it read while more may wait past them. In place
--          of a 0 for "no more", -<ms>: nothing more now, but the first group pause with an end
--          ends in <ms> ms (read while the topic has grouped ready messages), when it may become
--          claimable; a claim that removes pauses that ended tells the first one after them (1 ms
--          when more than 100 ended: the rest are for the next claim).
--          When the claim used up the rate limit's room, one more number follows: the µs until
--          its window has room again.
-- Replayed: idempotent. A request that already ran (the client lost the reply and sent it again)
-- returns the messages it leased then that are still leased to its token, and claims nothing new.
-- @include body_priority
-- @include check_group_keys
-- @include collect_member
-- @include expect
-- @include group_member
-- @include header
-- @include join_groups
-- @include ready_lists
-- @include window_add
-- @include window_count
-- @include window_wait
local wanted = tonumber(ARGV[1])
local wantedEarly = tonumber(ARGV[3])
-- The per-group rate limit: at most ARGV[8] messages of one group in any ARGV[9] ms. A group's
-- messages are given start times groupInterval µs apart (its pace); one is claimed at most
-- groupEarly µs before its start. Where that lets a claim take more than one (a limit of more than
-- about 200 a second for a period of a second), the starts are spread over the period and groupEarly
-- more (a message claimed groupEarly early still counts in no window twice), and a group takes up
-- to groupEarly's worth of its pace a claim: a busy group reaches its limit, not one a claim. Else
-- groupEarly is 0: one message a claim at most, exactly period / limit apart.
local groupRate = tonumber(ARGV[8])
local groupInterval, groupEarly = nil, 0
if groupRate then
  local groupPeriodUs = tonumber(ARGV[9]) * 1000
  local early = math.min(5000, groupPeriodUs / 100)
  groupInterval = groupPeriodUs / groupRate
  if early * (groupRate - 1) >= groupPeriodUs then
    groupInterval = (groupPeriodUs + early) / groupRate
    groupEarly = early
  end
end
-- The group machinery's tables and functions are made only for a claim of a topic with grouped
-- ready messages: a topic without groups pays for none of them.
local pacedGroups, pacedOrder, weights
local token = ARGV[4]
local record = redis.call('GET', KEYS[6])
if record then
  local last = cmsgpack.unpack(record)
  if last[1] == token then
    local out = {last[2], last[3], 0}
    local ids = {}
    for i = 4, #last do
      ids[#ids + 1] = last[i]
    end
    if #ids > 0 then
      local tokens = redis.call('HMGET', KEYS[5], unpack(ids))
      local stored = redis.call('HMGET', KEYS[3], unpack(ids))
      for i, id in ipairs(ids) do
        if tokens[i] == token and stored[i] then
          out[#out + 1] = id
          out[#out + 1] = stored[i]
        end
      end
    end
    return out
  end
end
-- A rate-limited topic takes no more due messages than its window has room for, and none early.
local rateLimit = tonumber(ARGV[5])
local groupLimit = tonumber(ARGV[7])
local periodUs, limited
if rateLimit then
  periodUs = tonumber(ARGV[6]) * 1000
  local windowNow = now_us()
  local room = rateLimit - window_count(KEYS[7], periodUs, windowNow)
  if room < 1 then
    if record then
      redis.call('DEL', KEYS[6])
    end
    return {0, 0, 0, window_wait(KEYS[7], periodUs, windowNow)}
  end
  limited = room < wanted
  wanted = math.min(wanted, room)
  wantedEarly = 0
end
local nowUs, now, deadline, out, claimRecord
-- Ids looked at in the ready lists, and members looked at in the groups: 1000 each at most.
local claimed, claimedEarly, looked, groupsLooked = 0, 0, 0, 0
local taken, leases, tokens = {}, {}, {}
-- Messages of each group taken (the slots they take), and the groups in the order first taken.
local slotsTaken, slotGroups = {}, {}
local full, more = false, false
local function start_clock()
  if not nowUs then
    -- The clock is read only when there is something to claim: an idle topic costs four reads.
    nowUs = now_us()
    now = math.floor(nowUs / 1000)
    deadline = now + tonumber(ARGV[2])
    out = {deadline, nowUs, 0}
    claimRecord = {token, deadline, nowUs}
  end
end
local function take(id, stored, early, group)
  taken[id] = true
  if group then
    if not slotsTaken[group] then
      slotsTaken[group] = 0
      slotGroups[#slotGroups + 1] = group
    end
    slotsTaken[group] = slotsTaken[group] + 1
  end
  leases[#leases + 1] = deadline
  leases[#leases + 1] = id
  tokens[#tokens + 1] = id
  tokens[#tokens + 1] = token
  claimRecord[#claimRecord + 1] = id
  out[#out + 1] = id
  out[#out + 1] = stored
  if early then
    claimedEarly = claimedEarly + 1
  else
    claimed = claimed + 1
  end
end
-- The lists to read, and for each one read: the ids looked at from its head, and those kept.
local lists, listPriorities = ready_lists(KEYS[1], 8)
local listLooked, listKept = {}, {}
-- Whether the topic has messages of groups, read once a call when a list holds an id: a message
-- of a group taken from a ready list takes a slot of its group too.
local listGroups
-- Messages of groups found due in a ready list, to join their groups (see join_groups): by id, and
-- their members by group, the groups in the order found.
local joining, joinOrder, joinByGroup = {}, {}, {}
local current, at, kept = 1, 0, {}
-- Takes from the ready lists, most urgent first, until cap due messages are taken in all (the
-- next due id stays), the last list ends or 1000 ids were looked at. Returns true when the last
-- list ended.
local function take_from_lists(cap)
  while current <= #lists do
    local list = lists[current]
    local stop = false
    while looked < 1000 do
      -- Enough for what is still wanted, and more while kept ids fill the head.
      local chunk = (cap - claimed) + math.min(wantedEarly - claimedEarly, 16)
      chunk = math.min(1000 - looked, math.max(chunk, #kept, 1))
      local ids = redis.call('LRANGE', list, at, at + chunk - 1)
      if #ids == 0 then
        break
      end
      start_clock()
      -- Three reads for the whole chunk: rescheduled ids (in the schedule), ids already in flight,
      -- and the stored messages (none for cancelled ids); a fourth, the messages' priorities,
      -- while the topic uses priorities.
      local scheduled = redis.call('ZMSCORE', KEYS[4], unpack(ids))
      local inFlight = redis.call('ZMSCORE', KEYS[2], unpack(ids))
      local stored = redis.call('HMGET', KEYS[3], unpack(ids))
      local priorities = listPriorities and redis.call('HMGET', KEYS[8], unpack(ids))
      if listGroups == nil then
        listGroups = redis.call('HLEN', KEYS[18]) > 0
      end
      local groupsOf = listGroups and redis.call('HMGET', KEYS[18], unpack(ids)) or {}
      for i, id in ipairs(ids) do
        local listPriority = listPriorities and listPriorities[current]
        local priority = priorities and tonumber(priorities[i])
        local ownList = not priorities or (priority or 0) == listPriority
        if priorities and not priority and listPriority > 0 and stored[i] then
          -- No entry (the hash lost or moved aside): the list of the priority its body names.
          ownList = body_priority(stored[i]) == listPriority
          priority = ownList and listPriority or nil
        end
        if ownList and groupsOf[i] and stored[i] and not scheduled[i] and not inFlight[i] and not taken[id] then
          local _, due = header(stored[i])
          local member = due and group_member(groupsOf[i], priority, due, id)
          if member and (joining[id] or redis.call('ZSCORE', KEYS[19], member)) then
            -- Left in a list by a cancel before it was sent again in its group (or met twice):
            -- its member in the group ready set serves it, in its group's turn and limit.
            ownList = false
          elseif member and due <= now then
            -- Made ready in a list by a version without groups: it joins its group.
            joining[id] = true
            collect_member(joinOrder, joinByGroup, groupsOf[i], priority, due, id)
            ownList = false
          elseif member then
            -- Not due yet: kept at the head until it is.
            kept[#kept + 1] = id
            ownList = false
          end
        end
        if not scheduled[i] and not inFlight[i] and stored[i] and not taken[id] and ownList then
          local _, due = header(stored[i])
          local early = due and due > now
          if early and claimedEarly >= wantedEarly then
            kept[#kept + 1] = id
          elseif not early and claimed >= cap then
            stop = true
            break
          else
            take(id, stored[i], early, groupsOf[i] or nil)
          end
        end
        looked = looked + 1
        at = at + 1
      end
      if stop or #ids < chunk or claimed >= cap then
        break
      end
    end
    if stop or claimed >= cap or looked >= 1000 then
      full = full or (stop and claimed >= wanted)
      return false
    end
    listLooked[current], listKept[current] = at, kept
    current, at, kept = current + 1, 0, {}
  end
  return true
end
-- The members of each group looked at (taken or dropped), from the head of the group.
local groupLooked
-- Takes due messages of a group, most urgent first, until cap due messages are taken in all or
-- 1000 ids were looked at. Returns true when the group has no member left.
local function take_from_group(group, cap)
  local members = groupLooked[group]
  if not members then
    members = {}
    groupLooked[group] = members
  end
  while groupsLooked < 1000 and claimed < cap do
    local chunk = math.min(1000 - groupsLooked, cap - claimed)
    local found = redis.call('ZRANGEBYLEX', KEYS[19], '[' .. group .. '\0', '(' .. group .. '\1', 'LIMIT', #members,
      chunk)
    if #found == 0 then
      return true
    end
    start_clock()
    local ids = {}
    for k, member in ipairs(found) do
      ids[k] = string.sub(member, #group + 17)
    end
    local scheduled = redis.call('ZMSCORE', KEYS[4], unpack(ids))
    local inFlight = redis.call('ZMSCORE', KEYS[2], unpack(ids))
    local stored = redis.call('HMGET', KEYS[3], unpack(ids))
    local groups = redis.call('HMGET', KEYS[18], unpack(ids))
    local priorities = listPriorities and redis.call('HMGET', KEYS[8], unpack(ids)) or {}
    for k, id in ipairs(ids) do
      local due
      -- A message without an entry in the groups hash (the hash lost) is the member's group's.
      if stored[k] and not scheduled[k] and not inFlight[k] and not taken[id] and (groups[k] or group) == group then
        local _
        _, due = header(stored[k])
      end
      local priority = priorities[k]
      if due and not priority and string.byte(found[k], #group + 2) ~= 57 then
        -- A member of a rank other than 9 (a priority) whose message has no entry in the
        -- priorities hash (lost or moved aside): the priority its body names.
        priority = body_priority(stored[k])
      end
      if due and found[k] == group_member(group, priority, due, id) then
        -- Its slot is counted in the group its entry names: with none (the hash lost, or the
        -- message sent again without a group), no settle would free it.
        take(id, stored[k], false, groups[k] or nil)
      end
      members[#members + 1] = found[k]
      groupsLooked = groupsLooked + 1
    end
    if #found < chunk then
      return true
    end
  end
  return false
end
local rotation
local badMembers
-- Pauses that ended, with each group's score in the rotation and its tag, to rejoin it.
local ended, endedScores, endedTags
-- ms until the first pause that has not ended ends, when it has an end: told in the reply.
local pauseEndsIn
-- Groups parked in the rotation while no pause is kept and the claim has no group concurrency,
-- with their tags: they rejoin the rotation (see write_stranded).
local stranded, strandedTags
-- The parked groups found with no pause kept whose strict-order wait (KEYS[26]) has not ended.
local stillWaiting
if redis.call('EXISTS', KEYS[19]) == 1 then
  pacedGroups, pacedOrder, weights, groupLooked, badMembers = {}, {}, {}, {}, {}
  ended, endedScores, endedTags, stranded, strandedTags, stillWaiting = {}, {}, {}, {}, {}, {}
  for i = 10, #ARGV - 1, 2 do
    local weight = tonumber(ARGV[i + 1])
    if weight and weight >= 1 then
      weights[ARGV[i]] = weight
    end
  end
  -- Written at the end (the members looked at, a paused group's count) even when no member is read:
  -- of the wrong type, it fails the call here, before the lists are trimmed.
  expect(KEYS[19], 'zset')
  -- Every read first: the pauses' head, the virtual time, the tag of the messages of no group, the
  -- rotation's head.
  local pauseHead = redis.call('ZRANGE', KEYS[24], 0, 0, 'WITHSCORES')
  if #pauseHead > 0 then
    start_clock()
    local firstEnd = tonumber(pauseHead[2])
    if firstEnd <= now then
      ended = redis.call('ZRANGEBYSCORE', KEYS[24], '-inf', now, 'LIMIT', 0, 100)
      endedScores = redis.call('ZMSCORE', KEYS[22], unpack(ended))
      endedTags = redis.call('HMGET', KEYS[21], unpack(ended))
      -- Strict-order waits end with their group's pause or before it (see retry): those that ended
      -- leave the group waits (the only write before the others; it stands alone, and fails on a
      -- key of the wrong type before any other write).
      redis.call('ZREMRANGEBYSCORE', KEYS[26], '-inf', now)
      -- The first pause past those read: told as well, as the claim at its end may have to put its
      -- group back (1 ms when it has ended too: more than 100 ended, the rest for the next claim).
      local nextHead = redis.call('ZRANGE', KEYS[24], #ended, #ended, 'WITHSCORES')
      if #nextHead > 0 and tonumber(nextHead[2]) ~= math.huge then
        pauseEndsIn = math.max(1, math.ceil(tonumber(nextHead[2]) - now))
      end
    elseif firstEnd ~= math.huge then
      pauseEndsIn = math.ceil(firstEnd - now)
    end
  end
  local headSize = math.min(100, wanted + 16)
  local head = redis.call('ZRANGE', KEYS[22], 0, headSize - 1, 'WITHSCORES')
  -- Groups not read have a tag of at least the last one read: none is served past it.
  local bound = (#head == 2 * headSize) and tonumber(head[2 * headSize]) or nil
  if not groupLimit and #pauseHead == 0 then
    -- Without a group concurrency a group is parked (+inf) only for a pause or its pace, both kept
    -- in the pauses: with none there (the key lost, evicted or moved aside), a parked group waits
    -- for nothing that would end, and rejoins (see write_stranded). Those of the head, else, when
    -- the head is full and ends before the parked ones, up to 1000 read past it.
    for k = 1, #head, 2 do
      if tonumber(head[k + 1]) == math.huge then
        stranded[#stranded + 1] = head[k]
      end
    end
    if #stranded == 0 and bound and bound ~= math.huge then
      stranded = redis.call('ZRANGEBYSCORE', KEYS[22], 'inf', 'inf', 'LIMIT', 0, 1000)
    end
    if #stranded > 0 then
      -- A group whose strict-order wait has not ended stays parked, its pause kept again (it
      -- was lost with the pauses): its waiting message is not claimed before its backoff.
      start_clock()
      local waitEnds = redis.call('ZMSCORE', KEYS[26], unpack(stranded))
      local rejoining = {}
      for k, group in ipairs(stranded) do
        local waitEnd = tonumber(waitEnds[k])
        if waitEnd and waitEnd > now then
          stillWaiting[#stillWaiting + 1] = {group = group, ends = waitEnd}
        else
          rejoining[#rejoining + 1] = group
        end
      end
      stranded = rejoining
    end
  end
  -- The virtual time, the tag of the messages of no group, and the tags of the stranded groups.
  local tags = redis.call('HMGET', KEYS[21], '\1V', '', unpack(stranded))
  local virtual = tonumber(tags[1]) or 0
  for k = 1, #stranded do
    strandedTags[k] = tags[k + 2]
  end
  if bound == math.huge then
    bound = nil
  end
  rotation = {virtual = virtual}
  if #head == 0 then
    -- The rotation is empty while the group ready set is not: it was lost (moved aside as of the
    -- wrong type, deleted). The groups of the set join it again, found one by one (up to 1000 a
    -- call; the rest once it is empty again), and a member that belongs to no group is dropped.
    -- Their counts are written, not read, on this path: checked here, before any write.
    expect(KEYS[20], 'hash')
    local from = '-'
    for _ = 1, 1000 do
      local first = redis.call('ZRANGEBYLEX', KEYS[19], from, '+', 'LIMIT', 0, 1)[1]
      if not first then
        break
      end
      local groupEnd = string.find(first, '\0', 1, true)
      if groupEnd and groupEnd > 1 then
        local group = string.sub(first, 1, groupEnd - 1)
        head[#head + 1] = group
        head[#head + 1] = virtual
        from = '[' .. group .. '\1'
      else
        badMembers[#badMembers + 1] = first
        from = '(' .. first
      end
    end
    rotation.rebuilt = true
  elseif redis.call('ZCARD', KEYS[22]) < redis.call('HLEN', KEYS[20]) then
    -- Groups with a count are missing from the rotation (it was lost, then a group joined it
    -- again): they join it again at the virtual time.
    local names = redis.call('HKEYS', KEYS[20])
    for first = 1, #names, 1000 do
      local last = math.min(first + 999, #names)
      local scores = redis.call('ZMSCORE', KEYS[22], unpack(names, first, last))
      for k = first, last do
        -- Up to 1000 a call: the rest by the next claims, the rotation still short.
        if not scores[k - first + 1] and #head < 2 * headSize + 2000 then
          head[#head + 1] = names[k]
          head[#head + 1] = virtual
        end
      end
    end
    rotation.rebuilt = true
  end
  -- The groups of the head that are paused, while some group is.
  local paused = {}
  if #pauseHead > 0 then
    local names = {}
    for k = 1, #head, 2 do
      if tonumber(head[k + 1]) ~= math.huge then
        names[#names + 1] = head[k]
      end
    end
    if #names > 0 then
      local untils = redis.call('ZMSCORE', KEYS[24], unpack(names))
      for k, group in ipairs(names) do
        paused[group] = untils[k] and tonumber(untils[k]) > now
      end
    end
  end
  for k = 1, #head, 2 do
    local tag = tonumber(head[k + 1])
    -- A group parked at its limit (+inf) is passed over: it comes back when a slot of it is freed.
    if tag ~= math.huge then
      -- A paused group is parked: passed over, not served.
      local entry = {group = head[k], tag = tag}
      if paused[head[k]] then
        entry.paused, entry.parked, entry.ended = true, true, true
      end
      rotation[#rotation + 1] = entry
    end
  end
  if redis.call('EXISTS', unpack(lists)) > 0 then
    rotation[#rotation + 1] = {group = '', tag = math.max(tonumber(tags[2]) or virtual, virtual), lists = true}
  end
  while claimed < wanted do
    local best
    for _, entry in ipairs(rotation) do
      if not entry.ended and (not best or entry.tag < best.tag or (entry.tag == best.tag and entry.group < best.group)) then
        best = entry
      end
    end
    if not best then
      -- Every group read is served: those not read (past the head) may have messages.
      more = bound ~= nil
      break
    end
    if bound and best.tag > bound then
      more = true
      break
    end
    rotation.virtual = math.max(rotation.virtual, best.tag)
    local before = claimed
    local weight = weights[best.group] or 1
    local cap = math.min(wanted, claimed + 16 * weight)
    local free
    if groupLimit and not best.lists then
      if not best.slots then
        best.slots = tonumber(redis.call('HGET', KEYS[23], best.group)) or 0
      end
      free = groupLimit - best.slots - (slotsTaken[best.group] or 0)
      cap = math.min(cap, claimed + math.max(free, 0))
    end
    -- A group's pace under the per-group rate limit: how many it may take now (a leaky bucket:
    -- its messages start at least period / limit apart, so never more than the limit in any
    -- window of the period; its next message is on time at its pace, kept in KEYS[25]).
    local paced
    if groupRate and not best.lists then
      start_clock()
      if not best.arrival then
        best.arrival = math.max(tonumber(redis.call('ZSCORE', KEYS[25], best.group)) or 0, nowUs)
      end
      paced = math.floor((nowUs + groupEarly - best.arrival) / groupInterval + 1e-9) + 1
      cap = math.min(cap, claimed + math.max(paced, 0))
    end
    if free and free <= 0 then
      best.parked = true
      best.ended = true
    elseif paced and paced <= 0 then
      best.parked, best.ended, best.paced = true, true, true
    elseif best.lists then
      -- The lists and the groups each look at 1000 at most: ids not yet due kept at the lists' head
      -- never use up the groups' share. A turn that takes nothing due ends the lists' turns.
      best.ended = take_from_lists(cap) or claimed == before
      more = more or (looked >= 1000 and not full)
    else
      best.empty = take_from_group(best.group, cap)
      best.ended = best.empty
      best.took = (best.took or 0) + (claimed - before)
      if free and claimed - before >= free and not best.empty then
        -- No more turns in this call; parked only when its counted slots reach the limit (a
        -- message whose groups hash entry is gone takes no counted slot, and no settle would
        -- bring the group back).
        best.ended = true
        best.parked = best.slots + (slotsTaken[best.group] or 0) >= groupLimit
      end
      if paced then
        best.arrival = best.arrival + (claimed - before) * groupInterval
        if not pacedGroups[best.group] then
          pacedGroups[best.group] = best
          pacedOrder[#pacedOrder + 1] = best.group
        end
        if claimed - before >= paced and not best.empty then
          -- Its pace used up: it waits, paused, until its next message is on time.
          best.parked, best.ended, best.paced = true, true, true
        end
      end
    end
    if best.paced and not pacedGroups[best.group] then
      pacedGroups[best.group] = best
      pacedOrder[#pacedOrder + 1] = best.group
    end
    best.tag = best.tag + (claimed - before) / weight
    -- Served, even when the groups' budget ends its turn: the members it looked at leave the set.
    best.served = true
    if not best.lists and groupsLooked >= 1000 and not best.ended then
      more = true
      break
    end
  end
  full = claimed >= wanted
else
  take_from_lists(wanted)
end
-- The writes of a claim that served the rotation (every read done): pauses that ended, groups put
-- back, paces, the rotation. Returns true when a group rejoined the rotation.
local function write_groups()
  -- Pauses that ended leave the pauses; their groups parked with ready messages rejoin the
  -- rotation. Returns true when a group rejoined.
  local function write_ended()
    if #ended == 0 then
      return false
    end
    local rejoined = false
    local virtual = rotation.virtual
    for k, group in ipairs(ended) do
      if tonumber(endedScores[k]) == math.huge then
        redis.call('ZADD', KEYS[22], string.format('%.17g', math.max(tonumber(endedTags[k]) or virtual, virtual)), group)
        rejoined = true
      end
    end
    redis.call('ZREM', KEYS[24], unpack(ended))
    return rejoined
  end
  -- Parked groups that wait for nothing (no pause kept, no group concurrency) rejoin the rotation at
  -- their tag (or the virtual time, whichever is later), to be served by the next claim. Returns true
  -- when a group rejoined.
  local function write_stranded()
    for _, waiting in ipairs(stillWaiting) do
      redis.call('ZADD', KEYS[24], string.format('%d', waiting.ends), waiting.group)
      if not pauseEndsIn or waiting.ends - now < pauseEndsIn then
        pauseEndsIn = math.max(1, waiting.ends - now)
      end
    end
    if #stranded == 0 then
      return false
    end
    local virtual = rotation.virtual
    for k, group in ipairs(stranded) do
      redis.call('ZADD', KEYS[22], string.format('%.17g', math.max(tonumber(strandedTags[k]) or virtual, virtual)), group)
    end
    return true
  end
  -- The paces of the groups served under the per-group rate limit, and a pause until its next
  -- message is on time for a group whose pace is used up (a longer pause is kept); paces past are
  -- worth none and leave.
  local function write_paces()
    if #pacedOrder == 0 then
      return
    end
    local arrivals = {}
    for _, group in ipairs(pacedOrder) do
      local entry = pacedGroups[group]
      arrivals[#arrivals + 1] = string.format('%.17g', entry.arrival)
      arrivals[#arrivals + 1] = group
      if entry.paced then
        local onTime = math.ceil((entry.arrival - groupEarly) / 1000)
        redis.call('ZADD', KEYS[24], 'GT', string.format('%d', math.max(onTime, now + 1)), group)
        if not pauseEndsIn or onTime - now < pauseEndsIn then
          pauseEndsIn = math.max(1, onTime - now)
        end
      end
    end
    redis.call('ZADD', KEYS[25], unpack(arrivals))
    redis.call('ZREMRANGEBYSCORE', KEYS[25], '-inf', '(' .. string.format('%.17g', nowUs))
  end
  local function write_rotation()
    -- A group served or rejoined: its members looked at leave the group ready set; one with none
    -- left leaves the rotation, its count and its tag, the others move to their new tag.
    for _, entry in ipairs(rotation) do
      if entry.lists and entry.served then
        if entry.ended then
          redis.call('HDEL', KEYS[21], '')
        else
          redis.call('HSET', KEYS[21], '', string.format('%.17g', entry.tag))
        end
      elseif not entry.lists and (entry.served or entry.paused or rotation.rebuilt) then
        local members = groupLooked[entry.group] or {}
        if #members > 0 then
          -- The members looked at are the group's first ones, in order: one range.
          redis.call('ZREMRANGEBYLEX', KEYS[19], '[' .. entry.group .. '\0', '[' .. members[#members])
        end
        -- What is left of the group is counted from the set itself, so a count that drifted is set right.
        local left = entry.empty and 0
          or redis.call('ZLEXCOUNT', KEYS[19], '[' .. entry.group .. '\0', '(' .. entry.group .. '\1')
        if left <= 0 then
          redis.call('HDEL', KEYS[20], entry.group)
          redis.call('ZREM', KEYS[22], entry.group)
          redis.call('HDEL', KEYS[21], entry.group)
        else
          local tag = string.format('%.17g', entry.tag)
          redis.call('HSET', KEYS[20], entry.group, left)
          redis.call('ZADD', KEYS[22], entry.parked and 'inf' or tag, entry.group)
          redis.call('HSET', KEYS[21], entry.group, tag)
        end
      end
    end
    for first = 1, #badMembers, 1000 do
      redis.call('ZREM', KEYS[19], unpack(badMembers, first, math.min(first + 999, #badMembers)))
    end
    redis.call('HSET', KEYS[21], '\1V', string.format('%.17g', rotation.virtual))
  end
  local rejoined = write_ended()
  rejoined = write_stranded() or rejoined
  write_paces()
  write_rotation()
  return rejoined
end
if current <= #lists then
  listLooked[current], listKept[current] = at, kept
end
if #joinOrder > 0 then
  -- The last reads: the keys the messages joining their groups are written to.
  check_group_keys(18)
end
if looked == 0 and groupsLooked == 0 then
  -- Groups found without members leave the rotation; paused ones are parked.
  local rejoined = rotation and write_groups()
  if record then
    -- A new request: the consumer has the reply of the one recorded.
    redis.call('DEL', KEYS[6])
  end
  -- A claim that only parked the groups it read says whether more may be waiting past them, as
  -- does one that put back a group whose pause ended.
  return {0, 0, (more or rejoined) and 1 or (pauseEndsIn and -pauseEndsIn or 0)}
end
if more or (not full and (looked >= 1000 or groupsLooked >= 1000)) then
  out[3] = 1
end
local slotCounts
if #leases > 0 then
  -- Checks the leases key before the first write, as it is not read above; reads the slots taken
  -- of the groups taken from, so that a field that is no count is set, not failed on half-way.
  expect(KEYS[5], 'hash')
  if #slotGroups > 0 then
    slotCounts = redis.call('HMGET', KEYS[23], unpack(slotGroups))
  end
end
for l, at in ipairs(listLooked) do
  local kept = listKept[l]
  redis.call('LTRIM', lists[l], at, -1)
  if #kept > 0 then
    local reversed = {}
    for k = #kept, 1, -1 do
      reversed[#reversed + 1] = kept[k]
    end
    redis.call('LPUSH', lists[l], unpack(reversed))
  end
end
if rotation and write_groups() then
  out[3] = 1
end
if #joinOrder > 0 then
  join_groups(18, joinOrder, joinByGroup)
  out[3] = 1
end
if slotCounts then
  for k, group in ipairs(slotGroups) do
    redis.call('HSET', KEYS[23], group, (tonumber(slotCounts[k]) or 0) + slotsTaken[group])
  end
end
if #leases > 0 then
  redis.call('ZADD', KEYS[2], unpack(leases))
  redis.call('HSET', KEYS[5], unpack(tokens))
  redis.call('SET', KEYS[6], cmsgpack.pack(claimRecord), 'PX', math.max(1, tonumber(ARGV[2])))
elseif record then
  redis.call('DEL', KEYS[6])
end
if rateLimit and #leases > 0 then
  window_add(KEYS[7], periodUs, nowUs, leases)
end
if limited and claimed >= wanted then
  out[#out + 1] = window_wait(KEYS[7], periodUs, nowUs)
end
if out[3] == 0 and pauseEndsIn then
  out[3] = -pauseEndsIn
end
return out

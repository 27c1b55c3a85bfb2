-- page: read one page of a topic's messages in one state, oldest first, without their payloads,
-- for the operations endpoint. Reads only: changes no state.
-- KEYS[1] state index ZSET or LIST  scheduled ZSET, ready LIST, in-flight ZSET or dead ZSET
-- KEYS[2] state messages HASH       messages HASH, or dead messages HASH for "d"
-- KEYS[3] dead errors HASH  id -> last error
-- KEYS[4] scheduled ZSET    id scored by due time
-- KEYS[5] in-flight ZSET    id scored by lease deadline
-- KEYS[6] priorities HASH id -> priority of messages sent with one above 0
-- KEYS[7] ready 1 LIST   ids of priority 1 waiting for a consumer, oldest first
-- KEYS[8] ready 2 LIST   the same for priority 2
-- KEYS[9] ready 3 LIST   the same for priority 3
-- KEYS[10] ready 4 LIST  the same for priority 4
-- KEYS[11] ready 5 LIST  the same for priority 5
-- KEYS[12] ready 6 LIST  the same for priority 6
-- KEYS[13] ready 7 LIST  the same for priority 7
-- KEYS[14] ready 8 LIST  the same for priority 8
-- KEYS[15] ready 9 LIST  the same for priority 9
-- KEYS[16] dead priorities HASH  id -> priority of dead messages sent with one above 0
-- KEYS[17] groups HASH       id -> group of messages sent with one; only read
-- KEYS[18] group ready ZSET  ready messages of groups, see group_member; only read
-- KEYS[19] group counts HASH group -> its members in the group ready ZSET; only read
-- KEYS[20] group tags HASH   the virtual time and the finish tag of each group; only read
-- KEYS[21] group rotation ZSET groups with ready messages, scored by finish tag; only read
-- ARGV[1] state: "z" scheduled (by due time), "r" ready (list order), "i" in flight (by lease
--         deadline), "d" dead (by time of death)
-- ARGV[2] offset: rank (or list index) of the first message, 0-based
-- ARGV[3] largest number of messages
-- ARGV[4] most bytes of a stored message to load for its header: a longer one is not read, and
--         its attempts and due time are given as -1
-- For "r", ids that claim would drop (cancelled, rescheduled or in flight since, or in the list of
-- another priority than their message's) are left out, so a page may hold fewer messages than
-- asked for; an id without an entry in the priorities hash (lost or moved aside) is its list's when
-- its body's "delay-queue-priority" header names that list's priority, as claim reads it (one whose
-- body is longer than ARGV[4] is not read, and left out: it may be a copy left there by a message
-- sent again with priority 0, which has no entry); a member of a group without an entry has the
-- priority its rank names. While the topic uses priorities, the ready lists are read one after the
-- other in the order claim takes them (priority 9 first, the ready list last); the ready messages
-- of groups come after them, group by group (by name), each group's in the order claim takes them.
-- Returns {entries in the index (for "r", in the ready lists), then six values per message: id,
--          score (due time, lease deadline or time of death; -1 for "r"), attempts, due time
--          (-1 and -1 when the stored message is gone, longer than ARGV[4] or its header unreadable),
--          last error or "",
--          priority (0 to 9)}.
-- @include body_priority
-- @include header
-- @include bounded_hget
-- @include ready_lists
local kind = ARGV[1]
local first = tonumber(ARGV[2])
local last = first + tonumber(ARGV[3]) - 1
local out = {}
local ids
-- For "r" while the topic uses priorities: the priority of the list each id was read from.
local idPriorities = {}
-- For "r": the priority each member of a group read names by its rank (9 - rank).
local memberPriorities = {}
if kind == 'r' then
  out[1], ids = 0, {}
  local skip = first
  local lists, listPriorities = ready_lists(KEYS[1], 6)
  for l, list in ipairs(lists) do
    local length = redis.call('LLEN', list)
    out[1] = out[1] + length
    if skip < length and #ids <= last - first then
      for _, id in ipairs(redis.call('LRANGE', list, skip, skip + (last - first) - #ids)) do
        ids[#ids + 1] = id
        idPriorities[#ids] = listPriorities and listPriorities[l]
      end
    end
    skip = math.max(0, skip - length)
  end
  local length = redis.call('ZCARD', KEYS[18])
  out[1] = out[1] + length
  if skip < length and #ids <= last - first then
    for _, member in ipairs(redis.call('ZRANGE', KEYS[18], skip, skip + (last - first) - #ids)) do
      local groupEnd = string.find(member, '\0', 1, true)
      if groupEnd then
        ids[#ids + 1] = string.sub(member, groupEnd + 16)
        memberPriorities[#ids] = 9 - (tonumber(string.sub(member, groupEnd + 1, groupEnd + 1)) or 9)
      end
    end
  end
else
  out[1] = redis.call('ZCARD', KEYS[1])
  ids = redis.call('ZRANGE', KEYS[1], first, last, 'WITHSCORES')
end
local step = (kind == 'r') and 1 or 2
-- For "r": an id listed once, where claim would take it (a message cancelled while ready and sent
-- again may be both in a ready list and in the group ready set).
local seen = {}
for i = 1, #ids, step do
  local id = ids[i]
  local score = (kind == 'r') and -1 or tonumber(ids[i + 1])
  local listPriority = idPriorities[i]
  local entry = tonumber(redis.call('HGET', (kind == 'd') and KEYS[16] or KEYS[6], id))
  local priority = entry or memberPriorities[i] or 0
  local stored
  if not entry and listPriority and listPriority > 0 then
    stored = bounded_hget(KEYS[2], id, tonumber(ARGV[4]))
    if stored and body_priority(stored) == listPriority then
      priority = listPriority
    end
  end
  local ownList = not listPriority or priority == listPriority
  if kind ~= 'r' or (not seen[id] and not redis.call('ZSCORE', KEYS[4], id)
      and not redis.call('ZSCORE', KEYS[5], id) and ownList) then
    seen[id] = true
    stored = stored or bounded_hget(KEYS[2], id, tonumber(ARGV[4]))
    if kind ~= 'r' or stored then
      local attempts, due = nil, nil
      if stored then
        attempts, due = header(stored)
      end
      local err = (kind == 'd') and redis.call('HGET', KEYS[3], id) or ''
      out[#out + 1] = id
      out[#out + 1] = score
      out[#out + 1] = attempts or -1
      out[#out + 1] = due or -1
      out[#out + 1] = err or ''
      out[#out + 1] = priority
    end
  end
end
return out

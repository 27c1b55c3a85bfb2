-- functions: helpers put in front of every other script of this folder when it is loaded
-- (Redis 6.2 has no shared script libraries), after the clock (server_clock.lua, or
-- offset_clock.lua for a store under test), which defines now_us() and now_ms(), and the
-- signal (publish_signal.lua, or spublish_signal.lua on a Redis 7 Cluster), which defines
-- signal(). Defines no state change of its own.
--
-- Rules every script follows, so that a failure never leaves a message half moved:
-- * every command that can fail (a key of the wrong type) runs before the first write: a script
--   reads, or checks with expect(), each key it writes before it writes any;
-- * a move adds a message to its destination before it removes it from its source.

-- Scripts read TIME and then write: replicate their effects, not the script (needed on Redis 6.2
-- with lua-replicate-commands off; always the case from Redis 7 on).
redis.replicate_commands()

-- Fails with Redis' own WRONGTYPE error, before any write, when a key holds another type than
-- kind ("hash", "zset", "list"); a missing key is fine. One O(1) read.
local probes = {hash = 'HLEN', zset = 'ZCARD', list = 'LLEN'}
local function expect(key, kind)
  redis.call(probes[kind], key)
end

-- Reads the "<attempts>:<due ms>:" header of a stored message.
-- Returns attempts, due time and the index of the ':' before the body; nothing if unreadable.
local function header(stored)
  local p1 = string.find(stored, ':', 1, true)
  local p2 = p1 and string.find(stored, ':', p1 + 1, true)
  local attempts = p1 and tonumber(string.sub(stored, 1, p1 - 1))
  local due = p2 and tonumber(string.sub(stored, p1 + 1, p2 - 1))
  if attempts and due then
    return attempts, due, p2
  end
end

-- The stored message with a new "<attempts>:<due ms>:" header and its body unchanged
-- (bodyAt: the index of the ':' before the body, as header() returns it).
local function with_header(stored, attempts, due, bodyAt)
  return attempts .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt)
end

-- Whether the lease on id is held by token (the token its claim was given).
local function holds_lease(leasesKey, id, token)
  return redis.call('HGET', leasesKey, id) == token
end

-- Schedules id at due and wakes the brokers when it becomes the earliest due message.
-- headDue: the due time of the schedule's head read before any write, or nil if it was empty.
local function schedule_and_signal(scheduledKey, id, due, headDue, channel, topic)
  redis.call('ZADD', scheduledKey, due, id)
  if not headDue or due < headDue then
    signal(channel, 'b' .. topic)
  end
end

-- The due time of the schedule's head, or nil if it is empty; a read that also checks the type.
local function head_due(scheduledKey)
  local head = redis.call('ZRANGE', scheduledKey, 0, 0, 'WITHSCORES')
  return head[2] and tonumber(head[2])
end

-- The name under which an earlier dead letter of the same id is kept when the id dies again:
-- "<id>~<time it died>", with more '~' until the name is free. Reads only.
local function buried_name(deadMessagesKey, deadKey, id)
  local died = redis.call('ZSCORE', deadKey, id) or '0'
  local name = id .. '~' .. string.format('%.0f', tonumber(died))
  while redis.call('HEXISTS', deadMessagesKey, name) == 1 do
    name = name .. '~'
  end
  return name
end

-- Moves a message to the dead set with its last error (writes only the dead keys; the caller
-- removes it from where it was afterwards). An earlier dead letter of the same id is kept under
-- buried_name(). Call check_bury() before the first write of the script.
local function bury(deadKey, deadMessagesKey, deadErrorsKey, id, stored, err, now)
  local earlier = redis.call('HGET', deadMessagesKey, id)
  if earlier then
    local name = buried_name(deadMessagesKey, deadKey, id)
    local died = redis.call('ZSCORE', deadKey, id) or now
    redis.call('HSET', deadMessagesKey, name, earlier)
    redis.call('HSET', deadErrorsKey, name, redis.call('HGET', deadErrorsKey, id) or '')
    redis.call('ZADD', deadKey, died, name)
  end
  redis.call('HSET', deadMessagesKey, id, stored)
  redis.call('HSET', deadErrorsKey, id, err)
  redis.call('ZADD', deadKey, now, id)
end

-- Checks the types of the dead keys, so that bury() cannot fail after the script's first write.
local function check_bury(deadKey, deadMessagesKey, deadErrorsKey)
  expect(deadKey, 'zset')
  expect(deadMessagesKey, 'hash')
  expect(deadErrorsKey, 'hash')
end


-- Priorities: a message sent with a priority above 0 has an entry in the priorities HASH
-- (id -> priority, 1 to 9) from its send until it is acknowledged, cancelled or purged, whatever
-- its state, and while ready it waits in the ready list of its priority instead of the ready list.
-- A script that moves ready messages takes the priorities hash and then the ready lists of
-- priorities 1 to 9 as KEYS[base], KEYS[base + 1] .. KEYS[base + 9], and reads HLEN of the hash
-- once: while it is 0, the topic uses no priority and the script does just what it did before.

-- The ready list of a priority (a number, a string from the priorities hash, or nil for 0):
-- KEYS[base + priority], or readyKey for 0.
local function ready_list(readyKey, base, priority)
  priority = tonumber(priority)
  if priority and priority > 0 then
    return KEYS[base + priority]
  end
  return readyKey
end

-- Whether any stored or dead message of the topic has a priority above 0. One O(1) read.
local function uses_priorities(base)
  return redis.call('HLEN', KEYS[base]) > 0
end

-- The ready lists, most urgent first: only readyKey while the topic uses no priority, else the
-- non-empty lists of priorities 9 down to 1, then readyKey. Checks the type of readyKey too, so
-- that a caller that reads it on every call without priorities still does with them.
local function ready_lists(readyKey, base)
  local lists = {}
  if uses_priorities(base) then
    expect(readyKey, 'list')
    for priority = 9, 1, -1 do
      if redis.call('LLEN', KEYS[base + priority]) > 0 then
        lists[#lists + 1] = KEYS[base + priority]
      end
    end
  end
  lists[#lists + 1] = readyKey
  return lists
end

-- Appends ids, in order, to the ready list of each one's priority (read from the priorities hash
-- in one HMGET). Checks the type of every list it writes before the first write.
local function push_by_priority(readyKey, base, ids)
  local priorities = redis.call('HMGET', KEYS[base], unpack(ids))
  local lists, byList = {}, {}
  for i, id in ipairs(ids) do
    local list = ready_list(readyKey, base, priorities[i])
    if not byList[list] then
      expect(list, 'list')
      byList[list] = {}
      lists[#lists + 1] = list
    end
    byList[list][#byList[list] + 1] = id
  end
  for _, list in ipairs(lists) do
    redis.call('RPUSH', list, unpack(byList[list]))
  end
end

-- Rate limits (claim.lua): a rate-limited topic's window is a ZSET with one entry per message
-- claimed, scored by its claim time (epoch µs). A claim takes no more due messages than the
-- window has room for at its time, so no window of the period ever holds more than the limit.

-- The score bound of the window that ends at nowUs: claims after it still count.
local function window_start(periodUs, nowUs)
  return '(' .. string.format('%.0f', nowUs - periodUs)
end

-- How many claims of the last periodUs the window holds at nowUs. One read.
local function window_count(windowKey, periodUs, nowUs)
  return redis.call('ZCOUNT', windowKey, window_start(periodUs, nowUs), '+inf')
end

-- The µs from nowUs until the oldest claim still counted leaves the window (at least 1).
local function window_wait(windowKey, periodUs, nowUs)
  local oldest = redis.call('ZRANGEBYSCORE', windowKey, window_start(periodUs, nowUs), '+inf', 'WITHSCORES',
    'LIMIT', 0, 1)
  return math.max(1, oldest[2] and (tonumber(oldest[2]) + periodUs - nowUs) or 1)
end

-- Records a claim in the window: one entry "<µs>:<id>" per message taken (inFlight: the claim's
-- in-flight entries, {deadline, id, deadline, id, ...}); drops the entries that no longer count
-- and lets the key expire a period after its newest entry.
local function window_add(windowKey, periodUs, nowUs, inFlight)
  local at = string.format('%.0f', nowUs)
  local entries = {}
  for i = 2, #inFlight, 2 do
    entries[#entries + 1] = at
    entries[#entries + 1] = at .. ':' .. inFlight[i]
  end
  redis.call('ZREMRANGEBYSCORE', windowKey, '-inf', string.format('%.0f', nowUs - periodUs))
  redis.call('ZADD', windowKey, unpack(entries))
  redis.call('PEXPIRE', windowKey, math.ceil(periodUs / 1000))
end

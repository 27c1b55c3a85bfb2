-- claim: lease ready messages to a consumer (state: ready -> in flight).
-- Reads the ready lists, most urgent first (those of priorities 9 down to 1 that are not empty,
-- then the ready list; only the ready list while the topic uses no priority), each from its head
-- in chunks, and decides for each id:
-- * dropped: left there by cancel or reschedule (no stored message, or scheduled again), already
--   in flight, or twice in this call; never delivered twice; while the topic uses priorities, also
--   an id whose message has another priority than the list's (left there by a cancel or reschedule
--   while ready, then sent again with another priority: it has an entry in the list of its own);
-- * taken: due, while fewer than ARGV[1] due ones are taken; or made ready by the broker's
--   lookahead before its due time, while fewer than ARGV[3] such ones are taken (the consumer holds
--   it and invokes the listener at its due time);
-- * kept: not yet due when ARGV[3] such ones are taken already; it stays at the head, in order,
--   and due ids behind it are still taken.
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
-- ARGV[1] largest number of due messages to claim (at most 1000)
-- ARGV[2] lease length in ms
-- ARGV[3] largest number of messages not yet due to claim
-- ARGV[4] lease token: new for each claim request of the consumer, kept when it re-sends one
-- ARGV[5] rate limit: most messages claimed in any window of ARGV[6] ms by all consumers
--         together (then none is taken before it is due); absent for a topic without one, whose
--         claims then run no command more
-- ARGV[6] rate limit period in ms (only with ARGV[5])
-- Returns {lease deadline (epoch ms), claim time (epoch µs), 1 if more ids may be waiting else 0,
--          id, stored message, id, stored message, ...}; {0, 0, 0} when the ready lists are empty.
--          When the claim used up the rate limit's room, one more number follows: the µs until
--          its window has room again.
-- Replayed: idempotent. A request that already ran (the client lost the reply and sent it again)
-- returns the messages it leased then that are still leased to its token, and claims nothing new.
-- @include expect
-- @include header
-- @include ready_lists
-- @include window_add
-- @include window_count
-- @include window_wait
local wanted = tonumber(ARGV[1])
local wantedEarly = tonumber(ARGV[3])
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
local claimed, claimedEarly, looked = 0, 0, 0
local taken, leases, tokens = {}, {}, {}
local full = false
-- The lists to read, and for each one read: the ids looked at from its head, and those kept.
local lists, listPriorities = ready_lists(KEYS[1], 8)
local listLooked, listKept = {}, {}
for l, list in ipairs(lists) do
  local at, kept = 0, {}
  while not full and looked < 1000 do
    -- Enough for what is still wanted, and more while kept ids fill the head.
    local chunk = (wanted - claimed) + math.min(wantedEarly - claimedEarly, 16)
    chunk = math.min(1000 - looked, math.max(chunk, #kept, 1))
    local ids = redis.call('LRANGE', list, at, at + chunk - 1)
    if #ids == 0 then
      break
    end
    if not nowUs then
      -- The clock is read only when there is something to claim: an idle topic costs three reads.
      nowUs = now_us()
      now = math.floor(nowUs / 1000)
      deadline = now + tonumber(ARGV[2])
      out = {deadline, nowUs, 0}
      claimRecord = {token, deadline, nowUs}
    end
    -- Three reads for the whole chunk: rescheduled ids (in the schedule), ids already in flight,
    -- and the stored messages (none for cancelled ids); a fourth, the messages' priorities, while
    -- the topic uses priorities.
    local scheduled = redis.call('ZMSCORE', KEYS[4], unpack(ids))
    local inFlight = redis.call('ZMSCORE', KEYS[2], unpack(ids))
    local stored = redis.call('HMGET', KEYS[3], unpack(ids))
    local priorities = listPriorities and redis.call('HMGET', KEYS[8], unpack(ids))
    for i, id in ipairs(ids) do
      local ownList = not priorities or (tonumber(priorities[i]) or 0) == listPriorities[l]
      if not scheduled[i] and not inFlight[i] and stored[i] and not taken[id] and ownList then
        local _, due = header(stored[i])
        local early = due and due > now
        if early and claimedEarly >= wantedEarly then
          kept[#kept + 1] = id
        elseif not early and claimed >= wanted then
          full = true
          break
        else
          taken[id] = true
          leases[#leases + 1] = deadline
          leases[#leases + 1] = id
          tokens[#tokens + 1] = id
          tokens[#tokens + 1] = token
          claimRecord[#claimRecord + 1] = id
          out[#out + 1] = id
          out[#out + 1] = stored[i]
          if early then
            claimedEarly = claimedEarly + 1
          else
            claimed = claimed + 1
          end
        end
      end
      looked = looked + 1
      at = at + 1
    end
    if #ids < chunk or claimed >= wanted then
      break
    end
  end
  listLooked[l], listKept[l] = at, kept
  if full or claimed >= wanted or looked >= 1000 then
    break
  end
end
if looked == 0 then
  if record then
    -- A new request: the consumer has the reply of the one recorded.
    redis.call('DEL', KEYS[6])
  end
  return {0, 0, 0}
end
if not full and looked >= 1000 then
  out[3] = 1
end
if #leases > 0 then
  -- Checks the leases key before the first write, as it is not read above.
  expect(KEYS[5], 'hash')
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
return out

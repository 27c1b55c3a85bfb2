-- replay: give dead-lettered messages another round of attempts (state: dead -> scheduled, due
-- now, attempts reset to 0, last error dropped, its priority moved from the dead priorities back
-- to the priorities hash, and its group, from its "delay-queue-group" header, back to the groups
-- hash; a header that is no group name (1 to 800 bytes, without control characters) is left as it
-- is and the message replayed without a group). Wakes the brokers.
-- A dead message is skipped, and stays dead, when its id is stored again (sent anew since it died),
-- remembered (a message of that id sent with a deduplication window was handled since, within its
-- window; for an earlier dead letter of an id, kept as "<id>~<time it died>", the id counts too), or
-- its stored header is unreadable (it would only be dead-lettered again as corrupt).
-- KEYS[1] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[2] dead messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] dead errors HASH     id -> last error
-- KEYS[4] messages HASH        id -> stored message
-- KEYS[5] scheduled ZSET       id scored by due time (epoch ms)
-- KEYS[6] priorities HASH      id -> priority of stored messages sent with one above 0
-- KEYS[7] dead priorities HASH id -> priority of dead letters that had one above 0
-- KEYS[8] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[9] remembered ZSET ids of handled messages sent with a deduplication window, scored by the
--         end of their window (epoch ms)
-- KEYS[10] groups HASH       id -> group of stored messages sent with one
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the number of partitions the caller spreads the topic over
-- ARGV[4..] ids to replay (at least one, at most 1000; an id named twice counts once)
-- Returns {messages replayed, ids left dead or not found, then the replayed ids}; the error
-- DQPARTITIONS, changing nothing, when ARGV[3] is not the partition's count.
-- Replayed: idempotent (an id already replayed is no longer dead and is skipped).
-- @include expect
-- @include header
-- @include header_value
-- @include id_of_name
-- @include partition_refusal
-- @include with_error
-- @include with_header
local refused = partition_refusal(KEYS[8], ARGV[3])
if refused then
  return refused
end
local now = now_ms()
local ids = {}
local seen = {}
for i = 4, #ARGV do
  if not seen[ARGV[i]] then
    ids[#ids + 1] = ARGV[i]
    seen[ARGV[i]] = true
  end
end
local dead = redis.call('HMGET', KEYS[2], unpack(ids))
local live = {}
for i, id in ipairs(ids) do
  live[i] = redis.call('HEXISTS', KEYS[4], id) == 1
end
if redis.call('EXISTS', KEYS[9]) == 1 then
  -- Each name, and the id of an earlier dead letter's name after it.
  local names = {}
  for _, id in ipairs(ids) do
    names[#names + 1] = id
    names[#names + 1] = id_of_name(id)
  end
  local scores = redis.call('ZMSCORE', KEYS[9], unpack(names))
  for i in ipairs(ids) do
    for k = 2 * i - 1, 2 * i do
      local score = tonumber(scores[k])
      live[i] = live[i] or (score ~= nil and score > now)
    end
  end
end
expect(KEYS[1], 'zset')
expect(KEYS[3], 'hash')
expect(KEYS[5], 'zset')
expect(KEYS[10], 'hash')
-- Priorities: one O(1) read while no dead letter has one.
local priorities = {}
if redis.call('HLEN', KEYS[7]) > 0 then
  priorities = redis.call('HMGET', KEYS[7], unpack(ids))
  expect(KEYS[6], 'hash')
end
local replayed = {}
local skipped = 0
for i, id in ipairs(ids) do
  local attempts, due, bodyAt
  if dead[i] then
    attempts, due, bodyAt = header(dead[i])
  end
  if attempts and not live[i] then
    -- Destination first, then the dead keys.
    local restored = with_header(dead[i], 0, now, bodyAt)
    local _, _, restoredBodyAt = header(restored)
    redis.call('HSET', KEYS[4], id, with_error(restored, restoredBodyAt, '') or restored)
    redis.call('ZADD', KEYS[5], now, id)
    local group = header_value(dead[i], bodyAt, 'delay-queue-group')
    if group and #group > 0 and #group <= 800 and not string.find(group, '%c') then
      redis.call('HSET', KEYS[10], id, group)
    end
    if priorities[i] then
      redis.call('HSET', KEYS[6], id, priorities[i])
      redis.call('HDEL', KEYS[7], id)
    end
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZREM', KEYS[1], id)
    replayed[#replayed + 1] = id
  else
    skipped = skipped + 1
  end
end
if #replayed > 0 then
  signal(ARGV[1], 'b' .. ARGV[2])
end
local out = {#replayed, skipped}
for _, id in ipairs(replayed) do
  out[#out + 1] = id
end
return out

-- ack: a consumer finished messages; delete them and all their data (state: in flight -> gone).
-- Only the consumer that still holds the lease may acknowledge: the lease token its claim was
-- given is its proof. A batch costs seven commands, however many messages it holds, one more
-- (deleting their priorities) while the topic has messages with a priority above 0, one more
-- (deleting their groups) and four to free their groups' slots while it has messages of a group,
-- and, while it
-- deduplicates, one to read the bodies and a few for the ids it remembers.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> stored message
-- KEYS[3] leases HASH     id -> lease token
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0
-- KEYS[5] remembered ZSET ids of messages sent with a deduplication window, handled, scored by the
--         end of their window (epoch ms)
-- KEYS[6] deduplication STRING the most ids KEYS[5] keeps; absent while the topic never had a
--         message sent with a deduplication window (then acknowledging costs one command more);
--         a value that is not a count of 1 to 18 digits counts as 100000
-- KEYS[7] groups HASH    id -> group of messages sent with one
-- KEYS[8] group slots HASH group -> its messages in flight (see free_slots)
-- KEYS[9] group tags HASH  the virtual time and the finish tag of each group in the rotation
-- KEYS[10] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3..] two values per message: id, lease token (at most 1000 messages)
-- The messages of a group free their slots (free_slots): a group parked at its concurrency limit
-- rejoins the rotation and the topic's consumers are signalled.
-- A message acknowledged with a "delay-queue-dedupe-ms" header (1 to 18 digits) is remembered that
-- long in KEYS[5]; past the most KEYS[6] allows, the ids whose windows end first are forgotten.
-- The remembered set expires when its last window ends, so that one no longer used (a partition
-- that a change of the partition count left) goes away.
-- Returns one integer per message: 1 if acknowledged, 0 if the lease was lost.
-- Replayed: idempotent (the second run finds no lease and reports 0).
-- @include decimal
-- @include expect
-- @include free_slots
-- @include header
-- @include header_value
-- @include slots_to_free
-- @include uses_groups
-- @include uses_priorities
local ids = {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local tokens = redis.call('HMGET', KEYS[3], unpack(ids))
local acked = {}
local out = {}
local seen = {}
for k, id in ipairs(ids) do
  if tokens[k] == ARGV[2 * k + 2] then
    -- An id named twice is deleted (and its slot freed) once.
    if not seen[id] then
      seen[id] = true
      acked[#acked + 1] = id
    end
    out[k] = 1
  else
    out[k] = 0
  end
end
if #acked > 0 then
  -- Every key's type is checked before the first write, so that a key of the wrong type fails
  -- the call having changed nothing.
  expect(KEYS[1], 'zset')
  expect(KEYS[2], 'hash')
  local prioritized = uses_priorities(4)
  local grouped = uses_groups(KEYS[7])
  local freeing = grouped and slots_to_free(KEYS[7], KEYS[8], KEYS[9], KEYS[10], acked)
  local bound = redis.call('GET', KEYS[6])
  if bound then
    expect(KEYS[5], 'zset')
    local maxRemembered = math.max(1, decimal(bound) or 100000)
    local bodies = redis.call('HMGET', KEYS[2], unpack(acked))
    local now
    for k, stored in ipairs(bodies) do
      local bodyAt = stored and select(3, header(stored))
      local windowText = bodyAt and header_value(stored, bodyAt, 'delay-queue-dedupe-ms')
      local window = windowText and decimal(windowText)
      if window then
        now = now or now_ms()
        redis.call('ZADD', KEYS[5], now + window, acked[k])
      end
    end
    if now then
      local excess = redis.call('ZCARD', KEYS[5]) - maxRemembered
      if excess > 0 then
        redis.call('ZPOPMIN', KEYS[5], excess)
      end
      local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
      if last[2] then
        redis.call('PEXPIREAT', KEYS[5], last[2])
      end
    end
  end
  redis.call('ZREM', KEYS[1], unpack(acked))
  redis.call('HDEL', KEYS[2], unpack(acked))
  redis.call('HDEL', KEYS[3], unpack(acked))
  if prioritized then
    redis.call('HDEL', KEYS[4], unpack(acked))
  end
  if grouped then
    if free_slots(freeing) then
      signal(ARGV[1], 'r' .. ARGV[2])
    end
    redis.call('HDEL', KEYS[7], unpack(acked))
  end
end
return out

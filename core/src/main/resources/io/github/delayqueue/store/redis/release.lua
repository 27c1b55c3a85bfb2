-- release: hand messages back unfinished, e.g. when their consumer stops (state: in flight ->
-- ready, at the head of the ready list of its priority, or back in its group, in the order given;
-- attempts unchanged).
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] ready LIST      ids waiting for a consumer
-- KEYS[3] leases HASH     id -> lease token
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0; only read
-- KEYS[5] ready 1 LIST ids of priority 1 waiting for a consumer, oldest first
-- KEYS[6] ready 2 LIST the same for priority 2
-- KEYS[7] ready 3 LIST the same for priority 3
-- KEYS[8] ready 4 LIST the same for priority 4
-- KEYS[9] ready 5 LIST the same for priority 5
-- KEYS[10] ready 6 LIST the same for priority 6
-- KEYS[11] ready 7 LIST the same for priority 7
-- KEYS[12] ready 8 LIST the same for priority 8
-- KEYS[13] ready 9 LIST the same for priority 9
-- KEYS[14] groups HASH       id -> group of messages sent with one (see uses_groups); only read
-- KEYS[15] group ready ZSET  ready messages of groups, see group_member
-- KEYS[16] group counts HASH group -> its members in the group ready ZSET
-- KEYS[17] group tags HASH   the virtual time and the finish tag of each group in the rotation
-- KEYS[18] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[19] messages HASH id -> stored message; only read, for the rank of a message of a group
-- KEYS[20] group slots HASH  group -> its messages in flight (see free_slots)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3..] two values per message: id, lease token given by claim (at most 1000 messages)
-- Returns one integer per message: 1 if it is ready again, 0 if the lease had been lost (an id
-- named twice is released by its first lease that holds).
-- Replayed: idempotent (the second run finds no lease and returns 0 for each).
-- @include hand_back
local ids, tokens = {}, {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  tokens[#tokens + 1] = ARGV[i + 1]
end
local held = redis.call('HMGET', KEYS[3], unpack(ids))
local out = {}
local released = {}
local seen = {}
for k, id in ipairs(ids) do
  if held[k] == tokens[k] and not seen[id] then
    seen[id] = true
    released[#released + 1] = id
    out[k] = 1
  else
    out[k] = 0
  end
end
if #released == 0 then
  return out
end
hand_back(KEYS[1], KEYS[2], KEYS[3], 4, released, KEYS[19], 14, KEYS[20])
signal(ARGV[1], 'r' .. ARGV[2])
return out

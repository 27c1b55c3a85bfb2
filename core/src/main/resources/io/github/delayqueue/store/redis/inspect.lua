-- inspect: find one message in whatever state it is and return the start of its stored form, for
-- the operations endpoint. Reads only: changes no state.
-- KEYS[1] messages HASH        id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET       id scored by due time
-- KEYS[3] in-flight ZSET       id scored by lease deadline
-- KEYS[4] dead ZSET            id scored by the time it died
-- KEYS[5] dead messages HASH   id -> stored message
-- KEYS[6] dead errors HASH     id -> last error
-- KEYS[7] priorities HASH      id -> priority of stored messages sent with one above 0
-- KEYS[8] dead priorities HASH id -> priority of dead letters that had one above 0
-- KEYS[9] partition count STRING the count marker of this partition (see partition_refusal)
-- ARGV[1] id
-- ARGV[2] most bytes of the stored message to return
-- ARGV[3] the number of partitions the caller spreads the topic over
-- ARGV[4] most bytes of the stored message to load: a longer one is not read (its length is
--         returned with an empty start), so that a huge value never holds Redis or the connection
-- A message sent again under the id of a dead one is reported in its live state, with its own
-- priority.
-- Returns {} if the id is unknown, else {state ("z" scheduled, "r" ready, "i" in flight, "d" dead),
--          score (due time, lease deadline or time of death; -1 when ready), length of the stored
--          message in bytes, its first ARGV[2] bytes ("" when longer than ARGV[4]), last error or "",
--          priority (0 to 9)}; the error DQPARTITIONS when ARGV[3] is not the partition's count.
-- @include partition_refusal
-- @include bounded_hget
local refused = partition_refusal(KEYS[9], ARGV[3])
if refused then
  return refused
end
local id = ARGV[1]
local limit = tonumber(ARGV[2])
local loadable = tonumber(ARGV[4])
local stored, length = bounded_hget(KEYS[1], id, loadable)
if stored then
  local priority = tonumber(redis.call('HGET', KEYS[7], id)) or 0
  local due = redis.call('ZSCORE', KEYS[2], id)
  if due then
    return {'z', tonumber(due), length, string.sub(stored, 1, limit), '', priority}
  end
  local lease = redis.call('ZSCORE', KEYS[3], id)
  if lease then
    return {'i', tonumber(lease), length, string.sub(stored, 1, limit), '', priority}
  end
  return {'r', -1, length, string.sub(stored, 1, limit), '', priority}
end
stored, length = bounded_hget(KEYS[5], id, loadable)
if not stored then
  return {}
end
local died = redis.call('ZSCORE', KEYS[4], id)
local priority = tonumber(redis.call('HGET', KEYS[8], id)) or 0
return {'d', died and tonumber(died) or -1, length, string.sub(stored, 1, limit), redis.call('HGET', KEYS[6], id) or '',
  priority}

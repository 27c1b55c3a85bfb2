-- group: read one group of a topic by name, for the operations endpoint: its ready messages, its
-- messages in flight, whether it waits at its concurrency limit and the ids of its first ready
-- messages. Reads only: changes no state.
-- KEYS[1] scheduled ZSET        id scored by due time (epoch ms)
-- KEYS[2] in-flight ZSET        id scored by lease deadline (epoch ms)
-- KEYS[3] groups HASH           id -> group of messages sent with one
-- KEYS[4] group ready ZSET      ready messages of groups, see group_member
-- KEYS[5] group counts HASH     group -> its members in the group ready ZSET
-- KEYS[6] group rotation ZSET   groups with ready messages, scored by finish tag (+inf: at its limit)
-- KEYS[7] group slots HASH      group -> its messages in flight
-- KEYS[8] group pauses ZSET     group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- KEYS[9] messages HASH         id -> "<attempts>:<due ms>:<body>"
-- KEYS[10] priorities HASH      id -> priority of messages sent with one above 0
-- KEYS[11] partition count STRING the count marker of this partition (see partition_refusal)
-- ARGV[1] group
-- ARGV[2] most ready ids to return; the group's first 5 times as many members are looked at (a
--         member left by a cancel or a reschedule is passed over: one that is not its message's
--         current member, by due time and priority, as claims drop it)
-- ARGV[3] the number of partitions the caller spreads the topic over
-- Returns {ready messages of the group (its count: members left by a cancel included), messages in
--          flight, 1 if it waits at its concurrency limit else 0, when its pause ends (epoch ms; 0
--          for a pause until it is resumed, -1 when it is not paused), then the ids of up to ARGV[2]
--          of its ready messages, most urgent first (priority, then due time, then id)}.
-- A paused group is parked in the rotation as one at its limit is: it is said paused, not waiting
-- at its limit. One whose pause ended, still parked until a claim puts it back, is said neither
-- paused nor waiting at its limit, unless it has messages in flight (it may be at its limit then).
-- Or the error reply of partition_refusal when ARGV[3] is not the partition's count.
-- @include group_member
-- @include header
-- @include partition_refusal
local refused = partition_refusal(KEYS[11], ARGV[3])
if refused then
  return refused
end
local group = ARGV[1]
local most = tonumber(ARGV[2])
local ready = tonumber(redis.call('HGET', KEYS[5], group)) or 0
local inFlight = tonumber(redis.call('HGET', KEYS[7], group)) or 0
local tag = redis.call('ZSCORE', KEYS[6], group)
local pausedUntil = tonumber(redis.call('ZSCORE', KEYS[8], group))
local pause = -1
if pausedUntil == math.huge then
  pause = 0
elseif pausedUntil and pausedUntil > now_ms() then
  pause = pausedUntil
end
local parked = (pause < 0 and tag and (tag == 'inf' or tonumber(tag) == math.huge)
  and not (pausedUntil and inFlight == 0)) and 1 or 0
local out = {ready, inFlight, parked, pause}
if most > 0 then
  local members = redis.call('ZRANGEBYLEX', KEYS[4], '[' .. group .. '\0', '(' .. group .. '\1', 'LIMIT', 0,
    most * 5)
  for _, member in ipairs(members) do
    local id = string.sub(member, #group + 17)
    local stored = redis.call('HGET', KEYS[9], id)
    local due = stored and select(2, header(stored))
    if due and redis.call('HGET', KEYS[3], id) == group and not redis.call('ZSCORE', KEYS[1], id)
        and not redis.call('ZSCORE', KEYS[2], id)
        and member == group_member(group, redis.call('HGET', KEYS[10], id), due, id) then
      out[#out + 1] = id
      if #out - 4 >= most then
        break
      end
    end
  end
end
return out

-- recount_slots: sets each group's slots taken (the group slots HASH) from the messages in flight,
-- so that a count that drifted (a groups hash entry lost while its message was in flight, the slots
-- hash lost or moved aside, a version without slots having ended a lease) is set right; a group
-- parked at its concurrency limit whose count went down rejoins the rotation, and the topic's
-- consumers are signalled. Not a transition of a message. One read while the topic uses no group
-- and counts no slot; skipped (nothing read past the count) while more than ARGV[3] messages are in
-- flight.
-- KEYS[1] in-flight ZSET      id scored by lease deadline; only read
-- KEYS[2] groups HASH         id -> group of messages sent with one; only read
-- KEYS[3] group slots HASH    group -> its messages in flight
-- KEYS[4] group tags HASH     the virtual time and the finish tag of each group in the rotation
-- KEYS[5] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the most messages in flight to count (at most 5000)
-- Returns {-1} when skipped, else the groups whose count it corrected, each followed by the count it
-- had and the count it has now: {group, before, after, group, before, after, ...}.
-- Replayed: harmless (a second run finds the counts right).
-- @include expect
-- @include group_counts
-- @include uses_groups
if not uses_groups(KEYS[2]) and redis.call('HLEN', KEYS[3]) == 0 then
  return {}
end
local limit = tonumber(ARGV[3])
if redis.call('ZCARD', KEYS[1]) > limit or redis.call('HLEN', KEYS[3]) > limit then
  return {-1}
end
local order, counted = group_counts(KEYS[2], redis.call('ZRANGE', KEYS[1], 0, -1))
local held = redis.call('HGETALL', KEYS[3])
local before = {}
for k = 1, #held, 2 do
  before[held[k]] = tonumber(held[k + 1]) or 0
  if not counted[held[k]] then
    counted[held[k]] = 0
    order[#order + 1] = held[k]
  end
end
local wrong = {}
for _, group in ipairs(order) do
  if counted[group] ~= (before[group] or 0) or (before[group] and counted[group] == 0) then
    wrong[#wrong + 1] = group
  end
end
if #wrong == 0 then
  return {}
end
expect(KEYS[3], 'hash')
expect(KEYS[4], 'hash')
local scores = redis.call('ZMSCORE', KEYS[5], unpack(wrong))
local tags = redis.call('HMGET', KEYS[4], '\1V', unpack(wrong))
local virtual = tonumber(tags[1]) or 0
local out, rejoined = {}, false
for k, group in ipairs(wrong) do
  local now = counted[group]
  if now > 0 then
    redis.call('HSET', KEYS[3], group, now)
  else
    redis.call('HDEL', KEYS[3], group)
  end
  if now < (before[group] or 0) and tonumber(scores[k]) == math.huge then
    redis.call('ZADD', KEYS[5], string.format('%.17g', math.max(tonumber(tags[k + 1]) or virtual, virtual)), group)
    rejoined = true
  end
  out[#out + 1] = group
  out[#out + 1] = before[group] or 0
  out[#out + 1] = now
end
if rejoined then
  signal(ARGV[1], 'r' .. ARGV[2])
end
return out

-- recount_slots: sets each group's slots taken (the group slots HASH) from the messages in flight,
-- so that a count that drifted (a groups hash entry lost while its message was in flight, the slots
-- hash lost or moved aside, a version without slots having ended a lease) is set right; a group
-- parked at its concurrency limit whose count went down rejoins the rotation, and the topic's
-- consumers are signalled. A group parked in the rotation (+inf) with no message in flight and no
-- pause (its count and its messages' groups hash entries lost before they settled: no settle freed
-- it) rejoins it too, up to 1000 a call; one whose strict-order wait (KEYS[7]) has not ended gets
-- its pause back until then instead (the pauses lost: its waiting message keeps its backoff), and
-- rejoins when it ends. Not a transition of a message. Two reads while the topic
-- uses no group, counts no slot and parks no group; skipped (nothing read past the counts) while
-- more than ARGV[3] messages are in flight.
-- KEYS[1] in-flight ZSET      id scored by lease deadline; only read
-- KEYS[2] groups HASH         id -> group of messages sent with one; only read
-- KEYS[3] group slots HASH    group -> its messages in flight
-- KEYS[4] group tags HASH     the virtual time and the finish tag of each group in the rotation
-- KEYS[5] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[6] group pauses ZSET   group -> when its pause ends (epoch ms; +inf: when resumed); written
--                             only for a group whose strict-order wait goes on while it has no pause
-- KEYS[7] group waits ZSET    group -> when its strict-order wait ends (epoch ms), see retry; only read
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the most messages in flight to count (at most 5000)
-- Returns {-1} when skipped, else the groups whose count it corrected, each followed by the count it
-- had and the count it has now: {group, before, after, group, before, after, ...}; a parked group
-- let back with nothing in flight reads {group, 0, 0}.
-- Replayed: harmless (a second run finds the counts right).
-- @include expect
-- @include group_counts
-- @include uses_groups
local parked = redis.call('ZRANGEBYSCORE', KEYS[5], 'inf', 'inf', 'LIMIT', 0, 1000)
if not uses_groups(KEYS[2]) and redis.call('HLEN', KEYS[3]) == 0 and #parked == 0 then
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
local wrong, isWrong = {}, {}
for _, group in ipairs(order) do
  if counted[group] ~= (before[group] or 0) or (before[group] and counted[group] == 0) then
    wrong[#wrong + 1] = group
    isWrong[group] = true
  end
end
-- Parked groups with nothing in flight and no pause, that no settle will let back; those whose
-- strict-order wait goes on get their pause back instead.
local stranded, waiting = {}, {}
if #parked > 0 then
  local now = now_ms()
  local untils = redis.call('ZMSCORE', KEYS[6], unpack(parked))
  local waitEnds = redis.call('ZMSCORE', KEYS[7], unpack(parked))
  for k, group in ipairs(parked) do
    local pausedUntil = tonumber(untils[k])
    if (counted[group] or 0) == 0 and not isWrong[group] and not (pausedUntil and pausedUntil > now) then
      local waitEnd = tonumber(waitEnds[k])
      if waitEnd and waitEnd > now then
        waiting[#waiting + 1] = string.format('%d', waitEnd)
        waiting[#waiting + 1] = group
      else
        stranded[#stranded + 1] = group
      end
    end
  end
end
if #wrong == 0 and #stranded == 0 and #waiting == 0 then
  return {}
end
expect(KEYS[3], 'hash')
expect(KEYS[4], 'hash')
if #waiting > 0 then
  expect(KEYS[6], 'zset')
end
-- Read in chunks: Lua unpacks some 8,000 values at most.
local scores, tags = {}, {}
local all = {}
for _, group in ipairs(wrong) do
  all[#all + 1] = group
end
for _, group in ipairs(stranded) do
  all[#all + 1] = group
end
for first = 1, #all, 1000 do
  local last = math.min(first + 999, #all)
  local someScores = redis.call('ZMSCORE', KEYS[5], unpack(all, first, last))
  local someTags = redis.call('HMGET', KEYS[4], unpack(all, first, last))
  for k = first, last do
    scores[k] = someScores[k - first + 1]
    tags[k] = someTags[k - first + 1]
  end
end
local virtual = tonumber(redis.call('HGET', KEYS[4], '\1V')) or 0
local out, rejoined = {}, false
local function rejoin(k, group)
  redis.call('ZADD', KEYS[5], string.format('%.17g', math.max(tonumber(tags[k]) or virtual, virtual)), group)
  rejoined = true
end
for k, group in ipairs(wrong) do
  local now = counted[group]
  if now > 0 then
    redis.call('HSET', KEYS[3], group, now)
  else
    redis.call('HDEL', KEYS[3], group)
  end
  if now < (before[group] or 0) and tonumber(scores[k]) == math.huge then
    rejoin(k, group)
  end
  out[#out + 1] = group
  out[#out + 1] = before[group] or 0
  out[#out + 1] = now
end
for k = #wrong + 1, #all do
  rejoin(k, all[k])
  out[#out + 1] = all[k]
  out[#out + 1] = 0
  out[#out + 1] = 0
end
if #waiting > 0 then
  redis.call('ZADD', KEYS[6], unpack(waiting))
end
if rejoined then
  signal(ARGV[1], 'r' .. ARGV[2])
end
return out

-- PROTOTYPE (issue 38), not library code: promote for a topic that uses groups.
-- Moves due ids from the schedule; a grouped id (entry in g) goes to gr:<group> scored by
-- rank = (9 - priority) * 2^44 + due ms, an ungrouped one to r (member "" in the rotation).
-- Each touched group, if not in ga, not paused (gp) and below its concurrency (gf < ARGV[3]),
-- joins ga at virtual time max(its last (gv), lowest in ga).
-- KEYS[1] s ZSET  KEYS[2] r LIST  KEYS[3] g HASH  KEYS[4] ga ZSET  KEYS[5] gf HASH
-- KEYS[6] gp SET  KEYS[7] gv HASH (last virtual time of a group that left ga)  KEYS[8] p HASH
-- ARGV[1] limit  ARGV[2] key prefix ("dq:{t}:")  ARGV[3] group concurrency (0: none)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
if #due == 0 then
  return 0
end
local ids, dues = {}, {}
for i = 1, #due, 2 do
  ids[#ids + 1] = due[i]
  dues[#dues + 1] = tonumber(due[i + 1])
end
local groups = redis.call('HLEN', KEYS[3]) > 0 and redis.call('HMGET', KEYS[3], unpack(ids))
local prios = redis.call('HLEN', KEYS[8]) > 0 and redis.call('HMGET', KEYS[8], unpack(ids))
local byGroup, order, ungrouped = {}, {}, {}
for k, id in ipairs(ids) do
  local g = groups and groups[k]
  if g then
    local args = byGroup[g]
    if not args then
      args = {}
      byGroup[g] = args
      order[#order + 1] = g
    end
    local p = prios and tonumber(prios[k]) or 0
    args[#args + 1] = (9 - p) * 17592186044416 + dues[k]
    args[#args + 1] = id
  else
    ungrouped[#ungrouped + 1] = id
  end
end
local prefix = ARGV[2]
for _, g in ipairs(order) do
  local args = byGroup[g]
  -- unpack() of more than ~7,990 values fails ("too many results to unpack"): chunks of 2,000 pairs.
  for from = 1, #args, 4000 do
    redis.call('ZADD', prefix .. 'gr:' .. g, unpack(args, from, math.min(from + 3999, #args)))
  end
end
if #ungrouped > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ungrouped))
  order[#order + 1] = ''
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - 1)
-- Activation: one ZSCORE per touched group, then the checks for the ones not active.
local conc = tonumber(ARGV[3])
local low
for _, g in ipairs(order) do
  if not redis.call('ZSCORE', KEYS[4], g) then
    local free = conc == 0 or g == '' or (tonumber(redis.call('HGET', KEYS[5], g)) or 0) < conc
    if free and redis.call('SISMEMBER', KEYS[6], g) == 0 then
      if not low then
        local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
        low = first[2] and tonumber(first[2]) or 0
      end
      local last = tonumber(redis.call('HGET', KEYS[7], g))
      local v = low
      if last and last > v then
        v = last
      end
      if last then
        redis.call('HDEL', KEYS[7], g)
      end
      redis.call('ZADD', KEYS[4], v, g)
    end
  end
end
return #ids

-- PROTOTYPE (issue 38), not library code: ack for a topic that uses groups. Frees each acked
-- id's slot (HINCRBY gf g -n, field deleted at 0) and puts its group back into ga when it has
-- ready messages, is not paused and has a free slot, at max(its last, lowest in ga).
-- KEYS[1] i  KEYS[2] m  KEYS[3] l  KEYS[4] g  KEYS[5] ga  KEYS[6] gf  KEYS[7] gp  KEYS[8] gv
-- ARGV[1] prefix  ARGV[2] concurrency (0: none)  ARGV[3..] id, token, id, token, ...
local ids = {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local tokens = redis.call('HMGET', KEYS[3], unpack(ids))
local groups = redis.call('HMGET', KEYS[4], unpack(ids))
local acked, freed, order = {}, {}, {}
for k, id in ipairs(ids) do
  if tokens[k] == ARGV[2 + 2 * k] then
    acked[#acked + 1] = id
    local g = groups[k]
    if g then
      if not freed[g] then
        order[#order + 1] = g
      end
      freed[g] = (freed[g] or 0) + 1
    end
  end
end
if #acked == 0 then
  return 0
end
redis.call('ZREM', KEYS[1], unpack(acked))
redis.call('HDEL', KEYS[2], unpack(acked))
redis.call('HDEL', KEYS[3], unpack(acked))
redis.call('HDEL', KEYS[4], unpack(acked))
local conc, low = tonumber(ARGV[2])
for _, g in ipairs(order) do
  local left = redis.call('HINCRBY', KEYS[6], g, -freed[g])
  if left <= 0 then
    redis.call('HDEL', KEYS[6], g)
    left = 0
  end
  if (conc == 0 or left < conc) and redis.call('EXISTS', ARGV[1] .. 'gr:' .. g) == 1
    and not redis.call('ZSCORE', KEYS[5], g) and redis.call('SISMEMBER', KEYS[7], g) == 0 then
    if not low then
      local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
      low = first[2] and tonumber(first[2]) or 0
    end
    local last = tonumber(redis.call('HGET', KEYS[8], g))
    if last then
      redis.call('HDEL', KEYS[8], g)
    end
    redis.call('ZADD', KEYS[5], (last and last > low) and last or low, g)
  end
end
return #acked

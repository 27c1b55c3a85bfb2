-- PROTOTYPE (issue 38), not library code: claim for a topic that uses groups, as the design says.
-- Each turn: ZRANGE ga 0 1 WITHSCORES; the lowest group takes k = min(wanted left, slots left,
-- floor((v2 - v) * w) + 1) with one ZPOPMIN gr:<g> k; v += taken / w; HINCRBY gf; ga updated
-- (ZADD, or ZREM + remember v in gv when emptied or at its concurrency). Then HMGET m, ZADD i,
-- HSET l, SET claim record, as today's claim.
-- KEYS[1] i ZSET  KEYS[2] m HASH  KEYS[3] l HASH  KEYS[4] claim record STRING  KEYS[5] ga ZSET
-- KEYS[6] gf HASH  KEYS[7] gv HASH  KEYS[8] gw HASH (group -> weight; empty: all 1)  KEYS[9] r LIST
-- ARGV[1] N  ARGV[2] lease ms  ARGV[3] token  ARGV[4] prefix  ARGV[5] concurrency (0: none)
-- ARGV[6] quantum (absent: 1, the design): a turn takes at least this many when the group has them,
--         even past the second group's virtual time (deficit-style; the overdraft is paid back as
--         its virtual time grows by all it took)
local wanted = tonumber(ARGV[1])
local token = ARGV[3]
local record = redis.call('GET', KEYS[4])
if record then
  local last = cmsgpack.unpack(record)
  if last[1] == token then
    return {last[2], last[3], 0} -- replay (prototype: not re-read)
  end
end
local prefix, conc = ARGV[4], tonumber(ARGV[5])
local quantum = tonumber(ARGV[6]) or 1
local weighted = redis.call('HLEN', KEYS[8]) > 0
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = math.floor(nowUs / 1000) + tonumber(ARGV[2])
local ids, turns = {}, 0
local claimed = 0
while claimed < wanted do
  local two = redis.call('ZRANGE', KEYS[5], 0, 1, 'WITHSCORES')
  if #two == 0 then
    break
  end
  turns = turns + 1
  local g, v = two[1], tonumber(two[2])
  local w = weighted and tonumber(redis.call('HGET', KEYS[8], g)) or 1
  local k = wanted - claimed
  if two[4] then
    k = math.min(k, math.max(quantum, math.floor((tonumber(two[4]) - v) * w) + 1))
  end
  local used = 0
  if conc > 0 and g ~= '' then
    used = tonumber(redis.call('HGET', KEYS[6], g)) or 0
    k = math.min(k, conc - used)
  end
  local got = 0
  if g == '' then
    local popped = redis.call('LPOP', KEYS[9], k)
    if popped then
      for _, id in ipairs(popped) do
        ids[#ids + 1] = id
      end
      got = #popped
    end
  else
    local popped = redis.call('ZPOPMIN', prefix .. 'gr:' .. g, k)
    for j = 1, #popped, 2 do
      ids[#ids + 1] = popped[j]
    end
    got = #popped / 2
    if got > 0 then
      redis.call('HINCRBY', KEYS[6], g, got)
    end
  end
  claimed = claimed + got
  v = v + got / w
  local empty = got < k or (g == '' and redis.call('LLEN', KEYS[9]) == 0)
    or (g ~= '' and redis.call('EXISTS', prefix .. 'gr:' .. g) == 0)
  if empty or (conc > 0 and g ~= '' and used + got >= conc) then
    redis.call('ZREM', KEYS[5], g)
    redis.call('HSET', KEYS[7], g, v)
  else
    redis.call('ZADD', KEYS[5], v, g)
  end
end
if redis.call('ZCARD', KEYS[5]) == 0 then
  -- Nobody active: no group has a claim to an earlier turn; forget the last virtual times.
  redis.call('DEL', KEYS[7])
end
if #ids == 0 then
  if record then
    redis.call('DEL', KEYS[4])
  end
  return {0, 0, 0}
end
local stored = redis.call('HMGET', KEYS[2], unpack(ids))
local out, leases, tokens, rec = {deadline, nowUs, turns}, {}, {}, {token, deadline, nowUs}
for k, id in ipairs(ids) do
  leases[#leases + 1] = deadline
  leases[#leases + 1] = id
  tokens[#tokens + 1] = id
  tokens[#tokens + 1] = token
  rec[#rec + 1] = id
  out[#out + 1] = id
  out[#out + 1] = stored[k]
end
redis.call('ZADD', KEYS[1], unpack(leases))
redis.call('HSET', KEYS[3], unpack(tokens))
redis.call('SET', KEYS[4], cmsgpack.pack(rec), 'PX', tonumber(ARGV[2]))
return out

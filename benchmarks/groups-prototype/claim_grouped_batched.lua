-- PROTOTYPE (issue 38), not library code: the design's claim with the rotation kept in Lua.
-- Same turns and same result as claim_grouped.lua (lowest (virtual time, name) first, a turn takes
-- min(wanted left, slots left, floor((v2 - v) * w) + 1) with one ZPOPMIN), but ga is read once
-- (ZRANGE ga 0 N WITHSCORES: only the N + 1 lowest groups can get a turn in a claim of N, as each
-- group ahead of one gets a message before it), gf and gw once (HMGET), and ga, gf, gv are written
-- once at the end (one ZADD, one ZREM, one HSET each) instead of on every turn.
-- KEYS and ARGV as claim_grouped.lua.
local wanted = tonumber(ARGV[1])
local token = ARGV[3]
local record = redis.call('GET', KEYS[4])
if record then
  local last = cmsgpack.unpack(record)
  if last[1] == token then
    return {last[2], last[3], 0}
  end
end
local prefix, conc = ARGV[4], tonumber(ARGV[5])
local quantum = tonumber(ARGV[6]) or 1
local cand = redis.call('ZRANGE', KEYS[5], 0, wanted, 'WITHSCORES')
if #cand == 0 then
  if record then
    redis.call('DEL', KEYS[4])
  end
  return {0, 0, 0}
end
local names, vt = {}, {}
for j = 1, #cand, 2 do
  names[#names + 1] = cand[j]
  vt[#vt + 1] = tonumber(cand[j + 1])
end
local weights = redis.call('HLEN', KEYS[8]) > 0 and redis.call('HMGET', KEYS[8], unpack(names))
local used = redis.call('HMGET', KEYS[6], unpack(names))
-- Binary heap of candidate indexes by (virtual time, name): the ZSET's order.
local heap = {}
local function less(a, b)
  return vt[a] < vt[b] or (vt[a] == vt[b] and names[a] < names[b])
end
local function push(j)
  heap[#heap + 1] = j
  local c = #heap
  while c > 1 do
    local p = math.floor(c / 2)
    if less(heap[c], heap[p]) then
      heap[c], heap[p] = heap[p], heap[c]
      c = p
    else
      break
    end
  end
end
local function pop()
  local top = heap[1]
  local n = #heap
  heap[1] = heap[n]
  heap[n] = nil
  n = n - 1
  local c = 1
  while true do
    local l, r, m = 2 * c, 2 * c + 1, c
    if l <= n and less(heap[l], heap[m]) then m = l end
    if r <= n and less(heap[r], heap[m]) then m = r end
    if m == c then break end
    heap[c], heap[m] = heap[m], heap[c]
    c = m
  end
  return top
end
for j = 1, #names do
  heap[j] = j -- ZRANGE order is already heap order
end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local deadline = math.floor(nowUs / 1000) + tonumber(ARGV[2])
local ids, took, out_of = {}, {}, {}
local claimed, turns = 0, 0
while claimed < wanted and #heap > 0 do
  local j = pop()
  turns = turns + 1
  local g = names[j]
  local w = weights and tonumber(weights[j]) or 1
  local k = wanted - claimed
  if heap[1] then
    k = math.min(k, math.max(quantum, math.floor((vt[heap[1]] - vt[j]) * w) + 1))
  end
  local slots
  if conc > 0 and g ~= '' then
    slots = conc - (tonumber(used[j]) or 0) - (took[j] or 0)
    k = math.min(k, slots)
  end
  local got
  if g == '' then
    local popped = redis.call('LPOP', KEYS[9], k) or {}
    for _, id in ipairs(popped) do
      ids[#ids + 1] = id
    end
    got = #popped
  else
    local popped = redis.call('ZPOPMIN', prefix .. 'gr:' .. g, k)
    for i = 1, #popped, 2 do
      ids[#ids + 1] = popped[i]
    end
    got = #popped / 2
  end
  took[j] = (took[j] or 0) + got
  claimed = claimed + got
  vt[j] = vt[j] + got / w
  if got < k or (slots and got >= slots) then
    out_of[j] = true
  elseif claimed < wanted then
    push(j) -- when got == k it may be empty now: found out by its next turn (0 popped) or below
  end
end
-- Write back the rotation: groups taken from that are still in the heap may be empty (got == k on
-- their last turn); one EXISTS each tells.
local zadd, zrem, gv, gf = {}, {}, {}, {}
for j, n in pairs(took) do
  local g = names[j]
  if not out_of[j] then
    local gone = g == '' and redis.call('LLEN', KEYS[9]) == 0
      or g ~= '' and redis.call('EXISTS', prefix .. 'gr:' .. g) == 0
    out_of[j] = gone
  end
  if out_of[j] then
    zrem[#zrem + 1] = g
    gv[#gv + 1] = g
    gv[#gv + 1] = vt[j]
  elseif n > 0 then
    zadd[#zadd + 1] = vt[j]
    zadd[#zadd + 1] = g
  end
  if n > 0 and g ~= '' then
    gf[#gf + 1] = g
    gf[#gf + 1] = (tonumber(used[j]) or 0) + n
  end
end
if #zadd > 0 then redis.call('ZADD', KEYS[5], unpack(zadd)) end
if #zrem > 0 then
  redis.call('ZREM', KEYS[5], unpack(zrem))
  if redis.call('ZCARD', KEYS[5]) == 0 then
    redis.call('DEL', KEYS[7])
  else
    redis.call('HSET', KEYS[7], unpack(gv))
  end
end
if #ids == 0 then
  if record then
    redis.call('DEL', KEYS[4])
  end
  return {0, 0, 0}
end
if #gf > 0 then
  redis.call('HSET', KEYS[6], unpack(gf))
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

-- extend_leases: handlers are still working on messages; push their lease deadlines forward
-- (state: in flight -> in flight). The lease tokens stay the same. A consumer renews every lease
-- it holds in the topic with one call (or one per 1000): four commands, the clock's TIME included,
-- however many messages it names.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] leases HASH     id -> lease token
-- ARGV[1] lease length in ms from Redis time
-- ARGV[2..] two values per message: id, lease token given by claim (at most 1000 messages)
-- Returns one integer per message: its new lease deadline (epoch ms), the later of the one it had
-- and now + the length; or -1 if the lease had been lost.
-- Replayed: idempotent (extends again from the time of the second run).
local ids, tokens = {}, {}
for i = 2, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  tokens[#tokens + 1] = ARGV[i + 1]
end
local held = redis.call('HMGET', KEYS[2], unpack(ids))
local deadlines = redis.call('ZMSCORE', KEYS[1], unpack(ids))
local extended = now_ms() + tonumber(ARGV[1])
local out = {}
local updates = {}
for k, id in ipairs(ids) do
  if held[k] == tokens[k] and deadlines[k] then
    local deadline = math.max(tonumber(deadlines[k]), extended)
    out[k] = deadline
    updates[#updates + 1] = deadline
    updates[#updates + 1] = id
  else
    out[k] = -1
  end
end
if #updates > 0 then
  redis.call('ZADD', KEYS[1], unpack(updates))
end
return out

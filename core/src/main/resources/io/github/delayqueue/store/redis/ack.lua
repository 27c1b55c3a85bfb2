-- ack: a consumer finished messages; delete them and all their data (state: in flight -> gone).
-- Only the consumer that still holds the lease may acknowledge: the lease token its claim was
-- given is its proof. A batch costs six commands, however many messages it holds, and one more
-- (deleting their priorities) while the topic has messages with a priority above 0.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> stored message
-- KEYS[3] leases HASH     id -> lease token
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0
-- ARGV[1..] two values per message: id, lease token (at most 1000 messages)
-- Returns one integer per message: 1 if acknowledged, 0 if the lease was lost.
-- Replayed: idempotent (the second run finds no lease and reports 0).
-- @include expect
-- @include uses_priorities
local ids = {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local tokens = redis.call('HMGET', KEYS[3], unpack(ids))
local acked = {}
local out = {}
for k, id in ipairs(ids) do
  if tokens[k] == ARGV[2 * k] then
    acked[#acked + 1] = id
    out[k] = 1
  else
    out[k] = 0
  end
end
if #acked > 0 then
  expect(KEYS[2], 'hash')
  local prioritized = uses_priorities(4)
  redis.call('ZREM', KEYS[1], unpack(acked))
  redis.call('HDEL', KEYS[2], unpack(acked))
  redis.call('HDEL', KEYS[3], unpack(acked))
  if prioritized then
    redis.call('HDEL', KEYS[4], unpack(acked))
  end
end
return out

-- ack: a consumer finished messages; delete them and all their data (state: in flight -> gone).
-- Only the consumer that still holds the lease may acknowledge: the lease deadline it was given
-- is its proof. A batch costs three commands, however many messages it holds.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> stored message
-- ARGV[1..] two values per message: id, lease deadline given by claim
-- Returns one integer per message: 1 if acknowledged, 0 if the lease was lost.
local ids = {}
for i = 1, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
end
local leases = redis.call('ZMSCORE', KEYS[1], unpack(ids))
local acked = {}
local out = {}
for k, id in ipairs(ids) do
  if leases[k] and tonumber(leases[k]) == tonumber(ARGV[2 * k]) then
    acked[#acked + 1] = id
    out[k] = 1
  else
    out[k] = 0
  end
end
if #acked > 0 then
  redis.call('ZREM', KEYS[1], unpack(acked))
  redis.call('HDEL', KEYS[2], unpack(acked))
end
return out

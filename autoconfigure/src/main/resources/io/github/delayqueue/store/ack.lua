-- ack: a consumer finished a message; delete it and all its data (state: in flight -> gone).
-- Only the consumer that still holds the lease may acknowledge: the lease deadline it was given
-- is its proof.
-- KEYS[1] in-flight ZSET  id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH   id -> stored message
-- ARGV[1..] two values per message: id, lease deadline given by claim
-- Returns one integer per message: 1 if acknowledged, 0 if the lease was lost.
local out = {}
for i = 1, #ARGV, 2 do
  local lease = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if lease and tonumber(lease) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out

-- remembered_ids: the ids a partition remembers for deduplication whose window has not ended by
-- the Redis clock (those ended are forgotten by the next send or ack): how many, when the last
-- window ends (epoch ms, 0 for none) and the first 5 of them. Only reads (ZCOUNT fails on a key of
-- another type, before any write of the caller).
local function remembered_ids(rememberedKey)
  local after = '(' .. string.format('%.0f', now_ms())
  local count = redis.call('ZCOUNT', rememberedKey, after, '+inf')
  if count == 0 then
    return 0, 0, {}
  end
  local last = redis.call('ZRANGE', rememberedKey, -1, -1, 'WITHSCORES')
  return count, tonumber(last[2]), redis.call('ZRANGEBYSCORE', rememberedKey, after, '+inf', 'LIMIT', 0, 5)
end

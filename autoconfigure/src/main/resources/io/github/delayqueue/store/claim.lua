-- claim: lease ready messages to a consumer (state: ready -> in flight).
-- Ids left in the ready list by cancel or reschedule (no stored message, or scheduled again) and
-- ids already in flight are dropped, so they are never delivered twice.
-- KEYS[1] ready LIST       ids waiting for a consumer
-- KEYS[2] in-flight ZSET   id scored by lease deadline (epoch ms)
-- KEYS[3] messages HASH    id -> "<attempts>:<due ms>:<body>"
-- KEYS[4] scheduled ZSET   id scored by due time
-- ARGV[1] largest number of messages to claim
-- ARGV[2] lease length in ms
-- Returns {lease deadline (epoch ms), claim time (epoch ms), id, stored message, id, stored message, ...}.
local now = now_ms()
local deadline = now + tonumber(ARGV[2])
local wanted = tonumber(ARGV[1])
local out = {deadline, now}
local claimed = 0
local popped = 0
while claimed < wanted and popped < 1000 do
  local ids = redis.call('LPOP', KEYS[1], wanted - claimed)
  if not ids then
    break
  end
  for _, id in ipairs(ids) do
    popped = popped + 1
    if not redis.call('ZSCORE', KEYS[4], id) then
      local stored = redis.call('HGET', KEYS[3], id)
      if stored and redis.call('ZADD', KEYS[2], 'NX', deadline, id) == 1 then
        out[#out + 1] = id
        out[#out + 1] = stored
        claimed = claimed + 1
      end
    end
  end
end
return out

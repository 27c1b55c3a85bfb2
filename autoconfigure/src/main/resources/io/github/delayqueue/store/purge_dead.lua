-- purge_dead: delete dead-lettered messages for good, with their last errors and priorities
-- (state: dead -> gone). The priority of an id that is stored again (sent anew since it died) is
-- left to that message.
-- KEYS[1] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[2] dead messages HASH   id -> stored message
-- KEYS[3] dead errors HASH     id -> last error
-- KEYS[4] priorities HASH      id -> priority of messages sent with one above 0
-- KEYS[5] messages HASH        id -> stored message; only read
-- ARGV[1..] ids to delete (at least one, at most 1000); ids that are not dead are left alone, an id
--           named twice counts once
-- Returns the number of messages deleted.
-- Replayed: idempotent (the second run finds nothing and returns 0).
-- @include expect
-- @include uses_priorities
local ids = {}
local seen = {}
for _, id in ipairs(ARGV) do
  if not seen[id] and (redis.call('ZSCORE', KEYS[1], id) or redis.call('HEXISTS', KEYS[2], id) == 1) then
    ids[#ids + 1] = id
  end
  seen[id] = true
end
expect(KEYS[2], 'hash')
expect(KEYS[3], 'hash')
local unprioritized = {}
if #ids > 0 and uses_priorities(4) then
  for _, id in ipairs(ids) do
    if redis.call('HEXISTS', KEYS[5], id) == 0 then
      unprioritized[#unprioritized + 1] = id
    end
  end
end
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HDEL', KEYS[2], unpack(ids))
  redis.call('HDEL', KEYS[3], unpack(ids))
end
if #unprioritized > 0 then
  redis.call('HDEL', KEYS[4], unpack(unprioritized))
end
return #ids

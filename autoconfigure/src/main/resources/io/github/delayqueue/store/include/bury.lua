-- bury: moves a message to the dead set with its last error (writes only the dead keys; the caller
-- removes it from where it was afterwards). An earlier dead letter of the same id is kept under
-- buried_name(). Call check_bury() before the first write of the script.
-- @include buried_name
local function bury(deadKey, deadMessagesKey, deadErrorsKey, id, stored, err, now)
  local earlier = redis.call('HGET', deadMessagesKey, id)
  if earlier then
    local name = buried_name(deadMessagesKey, deadKey, id)
    local died = redis.call('ZSCORE', deadKey, id) or now
    redis.call('HSET', deadMessagesKey, name, earlier)
    redis.call('HSET', deadErrorsKey, name, redis.call('HGET', deadErrorsKey, id) or '')
    redis.call('ZADD', deadKey, died, name)
  end
  redis.call('HSET', deadMessagesKey, id, stored)
  redis.call('HSET', deadErrorsKey, id, err)
  redis.call('ZADD', deadKey, now, id)
end

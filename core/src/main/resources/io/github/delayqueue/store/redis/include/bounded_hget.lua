-- bounded_hget: a hash field for the operations' reads without loading a huge value: the value
-- when it has at most max bytes, '' when it has more (not loaded), nil when the field is absent;
-- and its length in bytes. One HSTRLEN, then HGET only when small enough.
local function bounded_hget(hash, field, max)
  local length = redis.call('HSTRLEN', hash, field)
  if length > max then
    return '', length
  end
  if length == 0 and redis.call('HEXISTS', hash, field) == 0 then
    return nil, 0
  end
  return redis.call('HGET', hash, field), length
end

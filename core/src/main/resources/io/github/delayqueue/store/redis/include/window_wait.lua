-- window_wait: the µs from nowUs until the oldest claim still counted leaves the window (at least
-- 1).
-- @include window_start
local function window_wait(windowKey, periodUs, nowUs)
  local oldest = redis.call('ZRANGEBYSCORE', windowKey, window_start(periodUs, nowUs), '+inf', 'WITHSCORES',
    'LIMIT', 0, 1)
  return math.max(1, oldest[2] and (tonumber(oldest[2]) + periodUs - nowUs) or 1)
end

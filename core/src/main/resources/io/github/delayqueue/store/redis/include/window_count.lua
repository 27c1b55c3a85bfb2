-- window_count: how many claims of the last periodUs the window holds at nowUs. One read.
-- @include window_start
local function window_count(windowKey, periodUs, nowUs)
  return redis.call('ZCOUNT', windowKey, window_start(periodUs, nowUs), '+inf')
end

-- offset_clock: the clock of a store under test, put in front of common.lua instead of
-- server_clock.lua: the Redis server's clock plus an offset that a test moves forward
-- (delay-queue-test's DelayQueueTestClock), so that due times, leases and backoff see time
-- pass at once. The store appends the offset key to the keys of every call, after the keys its
-- script's header names; tests run on one Redis node, never a Cluster.
-- KEYS[#KEYS] clock offset STRING  microseconds to add to the server's clock (missing: 0)

-- The server's clock plus the offset, in epoch microseconds.
local function now_us()
  local t = redis.call('TIME')
  local offset = tonumber(redis.call('GET', KEYS[#KEYS]) or '0')
  return tonumber(t[1]) * 1000000 + tonumber(t[2]) + offset
end

-- The clock in epoch milliseconds.
local function now_ms()
  return math.floor(now_us() / 1000)
end


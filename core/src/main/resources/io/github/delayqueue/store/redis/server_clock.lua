-- server_clock: the clock every script reads, put in front of common.lua: the Redis server's.
-- Scripts call TIME and then write, which needs effects replication: common.lua turns it on
-- before any script body runs.

-- The Redis server's clock in epoch microseconds.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The clock in epoch milliseconds.
local function now_ms()
  return math.floor(now_us() / 1000)
end


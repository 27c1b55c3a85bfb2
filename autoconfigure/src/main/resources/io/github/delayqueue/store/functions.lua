-- functions: helpers put in front of every other script of this folder when it is loaded
-- (Redis 6.2 has no shared script libraries). Defines no state change of its own.

-- The Redis server's clock in epoch microseconds.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The Redis server's clock in epoch milliseconds.
local function now_ms()
  return math.floor(now_us() / 1000)
end

-- Reads the "<attempts>:<due ms>:" header of a stored message.
-- Returns attempts, due time and the index of the ':' before the body; nothing if unreadable.
local function header(stored)
  local p1 = string.find(stored, ':', 1, true)
  local p2 = p1 and string.find(stored, ':', p1 + 1, true)
  local attempts = p1 and tonumber(string.sub(stored, 1, p1 - 1))
  local due = p2 and tonumber(string.sub(stored, p1 + 1, p2 - 1))
  if attempts and due then
    return attempts, due, p2
  end
end


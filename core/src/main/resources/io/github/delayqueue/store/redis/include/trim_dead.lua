-- trim_dead: the dead-letter retention of a topic: deletes its oldest dead letters, from the dead
-- keys check_bury() returned (dead) alike (index, messages, errors, priorities), while the dead set
-- holds more than maxCount (0 for no bound) or they died more than maxAgeMs before now (0 for no
-- bound); at most 100 per call, the next burial goes on. Call it after bury(): it writes only keys
-- check_bury() checked. Returns how many it deleted.
local function trim_dead(dead, maxCount, maxAgeMs, now)
  local n = 0
  if maxCount > 0 then
    n = redis.call('ZCARD', dead.index) - maxCount
  end
  if maxAgeMs > 0 then
    local aged = redis.call('ZCOUNT', dead.index, '-inf', '(' .. string.format('%.0f', now - maxAgeMs))
    if aged > n then
      n = aged
    end
  end
  if n <= 0 then
    return 0
  end
  if n > 100 then
    n = 100
  end
  local names = redis.call('ZRANGE', dead.index, 0, n - 1)
  redis.call('ZREM', dead.index, unpack(names))
  redis.call('HDEL', dead.messages, unpack(names))
  redis.call('HDEL', dead.errors, unpack(names))
  if dead.prioritized then
    redis.call('HDEL', dead.priorities, unpack(names))
  end
  return #names
end

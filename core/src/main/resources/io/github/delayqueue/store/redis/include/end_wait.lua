-- end_wait: writes what wait_to_end found (ending, or nil for nothing) to the group waits ZSET
-- waitsKey: removes the entries of the wait that ends and, when another message of the group still
-- waits, sets the group's end to the latest of theirs.
local function end_wait(waitsKey, ending)
  if not ending then
    return
  end
  redis.call('ZREM', waitsKey, unpack(ending.members))
  if ending.later then
    redis.call('ZADD', waitsKey, ending.later, ending.group)
  end
end

-- bury: moves a message to the dead set with its last error and its priority (nil or false for
-- none), into the dead keys that check_bury() returned (dead); writes only those, and the caller
-- removes the message, and its entry in the priorities hash, from where it was afterwards. An
-- earlier dead letter of the same id is kept under buried_name(), its priority with it. A topic
-- whose dead letters have no priority pays nothing more for them. While the topic's dead letters
-- are listened to, the dead letter is also copied into its dead-letter queue (queue_dead_letter),
-- with its priority, and dead.copied set: the caller then signals the queue's consumers. Call check_bury() before
-- the first write of the script.
-- @include buried_name
-- @include queue_dead_letter
local function bury(dead, id, stored, err, priority, now)
  local earlier = redis.call('HGET', dead.messages, id)
  if earlier then
    local name = buried_name(dead.messages, dead.index, id)
    local died = redis.call('ZSCORE', dead.index, id) or now
    redis.call('HSET', dead.messages, name, earlier)
    redis.call('HSET', dead.errors, name, redis.call('HGET', dead.errors, id) or '')
    if dead.prioritized then
      local earlierPriority = redis.call('HGET', dead.priorities, id)
      if earlierPriority then
        redis.call('HSET', dead.priorities, name, earlierPriority)
      end
    end
    redis.call('ZADD', dead.index, died, name)
  end
  redis.call('HSET', dead.messages, id, stored)
  redis.call('HSET', dead.errors, id, err)
  if priority then
    redis.call('HSET', dead.priorities, id, priority)
    dead.prioritized = true
  elseif dead.prioritized then
    redis.call('HDEL', dead.priorities, id)
  end
  redis.call('ZADD', dead.index, now, id)
  if dead.queue then
    queue_dead_letter(dead.queue, id, stored, err, now, priority)
    dead.copied = true
  end
end

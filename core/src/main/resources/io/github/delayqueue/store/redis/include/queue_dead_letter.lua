-- queue_dead_letter: copies a dead letter into its topic's dead-letter queue (queue: its messages
-- HASH, ready LIST, priorities HASH and ready lists of priorities 1 to 9, as check_bury() returns
-- it), ready at once with no attempt made: "0:<now>:" then its body with the dead-letter headers
-- (see dead_letter_body), with the priority the message had (nil or false for none), so that the
-- queue's consumers claim it by that priority (a copy of none drops any entry of its name there).
-- An id the queue still holds is queued as "<id>~<now>", with more '~' until free, in the same
-- partition. Writes only the queue; check_bury() checked its types.
-- @include dead_letter_body
-- @include header
local function queue_dead_letter(queue, id, stored, err, now, priority)
  local attempts, _, bodyAt = header(stored)
  local copy = '0:' .. string.format('%.0f', now) .. ':' .. dead_letter_body(stored, bodyAt, id, err, attempts or 0)
  local name = id
  if redis.call('HEXISTS', queue.messages, name) == 1 then
    name = id .. '~' .. string.format('%.0f', now)
    while redis.call('HEXISTS', queue.messages, name) == 1 do
      name = name .. '~'
    end
  end
  redis.call('HSET', queue.messages, name, copy)
  priority = tonumber(priority)
  if priority and priority > 0 then
    redis.call('HSET', queue.priorities, name, priority)
    redis.call('RPUSH', KEYS[queue.base + priority - 1], name)
  else
    -- As send does for a message of no priority: an entry left behind under this name would
    -- have every claim drop the copy from the ready list as one of another priority.
    redis.call('HDEL', queue.priorities, name)
    redis.call('RPUSH', queue.ready, name)
  end
end

-- queue_dead_letter: copies a dead letter into its topic's dead-letter queue (queue: {messages =
-- its messages HASH, ready = its ready LIST}, as check_bury() returns it), ready at once with no
-- attempt made: "0:<now>:" then its body with the dead-letter headers (see dead_letter_body). An id
-- the queue still holds is queued as "<id>~<now>", with more '~' until free, in the same partition.
-- Writes only the queue; check_bury() checked its types.
-- @include dead_letter_body
-- @include header
local function queue_dead_letter(queue, id, stored, err, now)
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
  redis.call('RPUSH', queue.ready, name)
end

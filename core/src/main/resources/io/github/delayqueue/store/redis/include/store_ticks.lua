-- store_ticks: stores one message per tick of a schedule (id "<name>~<tick ms>", due at its tick,
-- no attempt made, the body given), unless its id is stored already, and wakes the brokers when
-- one becomes the earliest due. Call it after checking the types of both keys. Returns how many it
-- stored.
-- @include head_due
local function store_ticks(messagesKey, scheduledKey, name, ticks, body, channel, topic)
  local headDue = head_due(scheduledKey)
  local stored, earliest = 0, nil
  for _, tick in ipairs(ticks) do
    local id = name .. '~' .. tick
    if redis.call('HEXISTS', messagesKey, id) == 0 then
      local due = tonumber(tick)
      redis.call('HSET', messagesKey, id, '0:' .. tick .. ':' .. body)
      redis.call('ZADD', scheduledKey, due, id)
      stored = stored + 1
      if not earliest or due < earliest then
        earliest = due
      end
    end
  end
  if earliest and (not headDue or earliest < headDue) then
    signal(channel, 'b' .. topic)
  end
  return stored
end

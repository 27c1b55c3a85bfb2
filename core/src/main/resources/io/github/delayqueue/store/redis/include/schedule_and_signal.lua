-- schedule_and_signal: schedules id at due and wakes the brokers when it becomes the earliest due
-- message. headDue: the due time of the schedule's head read before any write, or nil if it was
-- empty.
local function schedule_and_signal(scheduledKey, id, due, headDue, channel, topic)
  redis.call('ZADD', scheduledKey, due, id)
  if not headDue or due < headDue then
    signal(channel, 'b' .. topic)
  end
end

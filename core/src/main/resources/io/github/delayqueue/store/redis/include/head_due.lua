-- head_due: the due time of the schedule's head, or nil if it is empty; a read that also checks the
-- type.
local function head_due(scheduledKey)
  local head = redis.call('ZRANGE', scheduledKey, 0, 0, 'WITHSCORES')
  return head[2] and tonumber(head[2])
end

-- free_slots: frees the group slots that slots_to_free read: each group's count of messages in
-- flight goes down by its messages named (the field goes at 0; a count that drifted below stops at
-- 0), and a group parked in the rotation at its concurrency limit rejoins it at its finish tag, or
-- at the topic's virtual time when that is later, so that the next claim serves it. Returns true
-- when a group rejoined (the caller then signals the topic's consumers: they may be idle, waiting
-- for exactly that), else false; nothing for a nil plan.
local function free_slots(plan)
  if not plan then
    return false
  end
  local slotsKey, rotationKey = plan.keys[1], plan.keys[3]
  local virtual = tonumber(plan.tags[1]) or 0
  local rejoined = false
  for k, group in ipairs(plan.order) do
    local left = (tonumber(plan.taken[k]) or 0) - plan.freed[group]
    if left > 0 then
      redis.call('HSET', slotsKey, group, left)
    elseif plan.taken[k] then
      redis.call('HDEL', slotsKey, group)
    end
    if tonumber(plan.scores[k]) == math.huge then
      local tag = math.max(tonumber(plan.tags[k + 1]) or virtual, virtual)
      redis.call('ZADD', rotationKey, string.format('%.17g', tag), group)
      rejoined = true
    end
  end
  return rejoined
end

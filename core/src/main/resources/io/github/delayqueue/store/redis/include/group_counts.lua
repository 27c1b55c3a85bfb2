-- group_counts: the groups of the messages named (groups HASH: id -> group) and how many of them
-- each group has. Returns the groups in the order first met and a table group -> count; a message
-- of no group counts nowhere; both empty when no id is named. One HMGET.
local function group_counts(groupsKey, ids)
  local order, counts = {}, {}
  if #ids == 0 then
    return order, counts
  end
  local groupOf = redis.call('HMGET', groupsKey, unpack(ids))
  for k = 1, #ids do
    local group = groupOf[k]
    if group then
      if not counts[group] then
        counts[group] = 0
        order[#order + 1] = group
      end
      counts[group] = counts[group] + 1
    end
  end
  return order, counts
end

-- push_by_priority: appends ids, in order, to the ready list of each one's priority (read from the
-- priorities hash in one HMGET). Checks the type of every list it writes before the first write.
-- @include expect
-- @include ready_list
local function push_by_priority(readyKey, base, ids)
  local priorities = redis.call('HMGET', KEYS[base], unpack(ids))
  local lists, byList = {}, {}
  for i, id in ipairs(ids) do
    local list = ready_list(readyKey, base, priorities[i])
    if not byList[list] then
      expect(list, 'list')
      byList[list] = {}
      lists[#lists + 1] = list
    end
    byList[list][#byList[list] + 1] = id
  end
  for _, list in ipairs(lists) do
    redis.call('RPUSH', list, unpack(byList[list]))
  end
end

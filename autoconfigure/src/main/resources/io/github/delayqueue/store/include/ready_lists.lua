-- ready_lists: the ready lists, most urgent first: only readyKey while the topic uses no priority,
-- else the non-empty lists of priorities 9 down to 1, then readyKey. Checks the type of readyKey
-- too, so that a caller that reads it on every call without priorities still does with them.
-- @include uses_priorities
-- @include expect
local function ready_lists(readyKey, base)
  local lists = {}
  if uses_priorities(base) then
    expect(readyKey, 'list')
    for priority = 9, 1, -1 do
      if redis.call('LLEN', KEYS[base + priority]) > 0 then
        lists[#lists + 1] = KEYS[base + priority]
      end
    end
  end
  lists[#lists + 1] = readyKey
  return lists
end

-- ready_lists: the ready lists, most urgent first: only readyKey while the topic uses no priority,
-- else the non-empty lists of priorities 9 down to 1, then readyKey. Checks the type of readyKey
-- too, so that a caller that reads it on every call without priorities still does with them.
-- Returns the lists and, while the topic uses priorities, the priority of each (0 for readyKey),
-- else nil. An id is ready in a list only while its message has that list's priority: one found
-- in the list of another priority was left there (cancelled or rescheduled while ready, then sent
-- again with another priority), and the list of its priority holds an entry of its own.
-- @include uses_priorities
-- @include expect
local function ready_lists(readyKey, base)
  local lists, priorities = {}, nil
  if uses_priorities(base) then
    expect(readyKey, 'list')
    priorities = {}
    for priority = 9, 1, -1 do
      if redis.call('LLEN', KEYS[base + priority]) > 0 then
        lists[#lists + 1] = KEYS[base + priority]
        priorities[#priorities + 1] = priority
      end
    end
    priorities[#priorities + 1] = 0
  end
  lists[#lists + 1] = readyKey
  return lists, priorities
end

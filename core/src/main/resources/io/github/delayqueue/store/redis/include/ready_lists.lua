-- ready_lists: the ready lists, most urgent first: only readyKey while the topic uses no priority,
-- else the non-empty lists of priorities 9 down to 1, then readyKey. A topic uses priorities while
-- its priorities hash (KEYS[base]) or a list of a priority (KEYS[base + 1] .. KEYS[base + 9])
-- exists: one EXISTS, as many reads as a check of the hash alone; so ids left in the lists of
-- priorities when the hash was lost (deleted, evicted, moved aside as of the wrong type) are still
-- read. Checks the type of readyKey too, so that a caller that reads it on every call without
-- priorities still does with them.
-- Returns the lists and, while the topic uses priorities, the priority of each (0 for readyKey),
-- else nil. An id is ready in a list only while its message has that list's priority: one found
-- in the list of another priority was left there (cancelled or rescheduled while ready, then sent
-- again with another priority), and the list of its priority holds an entry of its own.
-- @include expect
local function ready_lists(readyKey, base)
  local lists, priorities = {}, nil
  if redis.call('EXISTS', unpack(KEYS, base, base + 9)) > 0 then
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

-- hand_back: puts messages in flight back at the head of the ready list of each one's priority, in
-- the order given, and ends their leases (their entries in the in-flight ZSET and the leases HASH
-- go), attempts unchanged. The caller has checked that each id is still leased to the caller's
-- token, and names each id once. Checks the type of every key it writes before the first write.
-- @include expect
-- @include ready_list
-- @include uses_priorities
local function hand_back(inFlightKey, readyKey, leasesKey, base, ids)
  expect(inFlightKey, 'zset')
  local priorities = {}
  if uses_priorities(base) then
    priorities = redis.call('HMGET', KEYS[base], unpack(ids))
  end
  -- Each list's ids last first: LPUSH puts the last one pushed at the head.
  local lists, byList = {}, {}
  for i = #ids, 1, -1 do
    local list = ready_list(readyKey, base, priorities[i])
    if not byList[list] then
      expect(list, 'list')
      byList[list] = {}
      lists[#lists + 1] = list
    end
    byList[list][#byList[list] + 1] = ids[i]
  end
  -- Destination first: every ready list's type was checked above, before anything is written.
  for _, list in ipairs(lists) do
    redis.call('LPUSH', list, unpack(byList[list]))
  end
  redis.call('ZREM', inFlightKey, unpack(ids))
  redis.call('HDEL', leasesKey, unpack(ids))
end

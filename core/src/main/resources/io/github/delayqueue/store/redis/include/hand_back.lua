-- hand_back: puts messages in flight back at the head of the ready list of each one's priority, in
-- the order given, and ends their leases (their entries in the in-flight ZSET and the leases HASH
-- go), attempts unchanged. A message of a group goes back to the group ready set instead, where
-- its rank (its priority and due time, read from messagesKey) puts it ahead of its group's later
-- messages, and its group joins the rotation (join_groups; the group keys from KEYS[gbase]); the
-- messages of groups free their slots in the group slots HASH slotsKey (free_slots). The
-- caller has checked that each id is still leased to the caller's token, and names each id once.
-- Checks the type of every key it writes before the first write.
-- @include check_group_keys
-- @include collect_member
-- @include expect
-- @include free_slots
-- @include header
-- @include join_groups
-- @include ready_list
-- @include slots_to_free
-- @include uses_groups
-- @include uses_priorities
local function hand_back(inFlightKey, readyKey, leasesKey, base, ids, messagesKey, gbase, slotsKey)
  expect(inFlightKey, 'zset')
  local priorities = {}
  if uses_priorities(base) then
    priorities = redis.call('HMGET', KEYS[base], unpack(ids))
  end
  local groups, stored = {}, {}
  if uses_groups(KEYS[gbase]) then
    groups = redis.call('HMGET', KEYS[gbase], unpack(ids))
    stored = redis.call('HMGET', messagesKey, unpack(ids))
    check_group_keys(gbase)
  end
  local freeing = slots_to_free(KEYS[gbase], slotsKey, KEYS[gbase + 3], KEYS[gbase + 4], ids)
  -- Each list's ids last first: LPUSH puts the last one pushed at the head.
  local lists, byList = {}, {}
  local order, byGroup = {}, {}
  for i = #ids, 1, -1 do
    local group = groups[i]
    local due = group and stored[i] and select(2, header(stored[i]))
    if due then
      collect_member(order, byGroup, group, priorities[i], due, ids[i])
    else
      local list = ready_list(readyKey, base, priorities[i])
      if not byList[list] then
        expect(list, 'list')
        byList[list] = {}
        lists[#lists + 1] = list
      end
      byList[list][#byList[list] + 1] = ids[i]
    end
  end
  -- Destination first: every ready list's type was checked above, before anything is written.
  for _, list in ipairs(lists) do
    redis.call('LPUSH', list, unpack(byList[list]))
  end
  if #order > 0 then
    join_groups(gbase, order, byGroup)
  end
  free_slots(freeing)
  redis.call('ZREM', inFlightKey, unpack(ids))
  redis.call('HDEL', leasesKey, unpack(ids))
end

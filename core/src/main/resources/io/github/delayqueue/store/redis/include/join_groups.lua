-- join_groups: makes messages of groups ready: adds each member (see group_member) to the group
-- ready ZSET, counts the members it added in the group counts HASH, and puts each group that was
-- not in the rotation into it at its finish tag, or at the topic's virtual time when that is
-- later (a group gets no credit for time away). byGroup maps each group to the list of its
-- members, groups lists the groups in the order to join. Call check_group_keys() before the
-- script's first write. Returns the number of members added (a member already there counts once).
local function join_groups(gbase, groups, byGroup)
  local added = 0
  local tags = redis.call('HMGET', KEYS[gbase + 3], '\1V', unpack(groups))
  local virtual = tonumber(tags[1]) or 0
  for g, group in ipairs(groups) do
    local members = byGroup[group]
    local new = 0
    for first = 1, #members, 1000 do
      local args = {}
      for k = first, math.min(first + 999, #members) do
        args[#args + 1] = 0
        args[#args + 1] = members[k]
      end
      new = new + redis.call('ZADD', KEYS[gbase + 1], unpack(args))
    end
    if new > 0 then
      redis.call('HINCRBY', KEYS[gbase + 2], group, new)
      added = added + new
    end
    local tag = math.max(tonumber(tags[g + 1]) or virtual, virtual)
    redis.call('ZADD', KEYS[gbase + 4], 'NX', string.format('%.17g', tag), group)
  end
  return added
end

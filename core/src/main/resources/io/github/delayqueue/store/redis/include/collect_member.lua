-- collect_member: adds the member of a message of a group (see group_member) to byGroup (group ->
-- its members, in order), noting the group in order the first time, for join_groups.
-- @include group_member
local function collect_member(order, byGroup, group, priority, due, id)
  local members = byGroup[group]
  if not members then
    members = {}
    byGroup[group] = members
    order[#order + 1] = group
  end
  members[#members + 1] = group_member(group, priority, due, id)
end

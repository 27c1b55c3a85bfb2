-- group_member: the member of a ready message of a group in the group ready ZSET:
-- "<group>\0<rank>\0<id>", rank being one digit, 9 minus the priority (nil or false for 0), then
-- the due time in 13 digits (epoch ms, 0 for one before the epoch). All scores are 0, so one
-- group's members sort by rank: its most urgent message first, then the one due first, then by id.
-- The due times formatted are kept for the call, as a burst shares a few.
local formattedDue = {}
local function group_member(group, priority, due, id)
  local text = formattedDue[due]
  if not text then
    text = string.format('%013.0f', math.max(0, due))
    formattedDue[due] = text
  end
  return group .. '\0' .. (9 - (tonumber(priority) or 0)) .. text .. '\0' .. id
end

-- body_priority: the priority that the "delay-queue-priority" header of a stored message's body
-- names (as the template writes it for a priority above 0), or nil when it names none or the body
-- is not in the stored format.
-- @include header
-- @include header_value
local function body_priority(stored)
  local _, _, bodyAt = header(stored)
  return bodyAt and tonumber(header_value(stored, bodyAt, 'delay-queue-priority')) or nil
end

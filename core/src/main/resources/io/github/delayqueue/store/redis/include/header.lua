-- header: reads the "<attempts>:<due ms>:" header of a stored message. Returns attempts, due time
-- and the index of the ':' before the body; nothing if unreadable.
local function header(stored)
  local p1 = string.find(stored, ':', 1, true)
  local p2 = p1 and string.find(stored, ':', p1 + 1, true)
  local attempts = p1 and tonumber(string.sub(stored, 1, p1 - 1))
  local due = p2 and tonumber(string.sub(stored, p1 + 1, p2 - 1))
  if attempts and due then
    return attempts, due, p2
  end
end

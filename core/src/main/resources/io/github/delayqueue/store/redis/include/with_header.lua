-- with_header: the stored message with a new "<attempts>:<due ms>:" header and its body unchanged
-- (bodyAt: the index of the ':' before the body, as header() returns it).
local function with_header(stored, attempts, due, bodyAt)
  return attempts .. ':' .. string.format('%.0f', due) .. string.sub(stored, bodyAt)
end

-- header_value: the value of the header named name in the body of a stored message, or nil when
-- it has none or the body is not in the stored format (bodyAt as header() returns it).
-- @include header_list
local function header_value(stored, bodyAt, name)
  local entries = header_list(stored, bodyAt)
  for _, entry in ipairs(entries or {}) do
    if entry[1] == name then
      return string.sub(stored, entry[4], entry[3])
    end
  end
  return nil
end

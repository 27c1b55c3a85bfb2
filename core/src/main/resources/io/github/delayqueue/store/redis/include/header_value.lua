-- header_value: the value of the header named name in the body of a stored message, or nil when
-- it has none or the body is not in the stored format. bodyAt: the index of the ':' before the
-- body, as header() returns it. The body is "1:<header count>:" then per header
-- "<name length>:<name><value length>:<value>", then the payload (see MessageFormat).
-- @include decimal
local function header_value(stored, bodyAt, name)
  if string.sub(stored, bodyAt + 1, bodyAt + 2) ~= '1:' then
    return nil
  end
  local at = bodyAt + 3
  local colon = string.find(stored, ':', at, true)
  local count = colon and decimal(string.sub(stored, at, colon - 1))
  if not count then
    return nil
  end
  at = colon + 1
  for _ = 1, count do
    colon = string.find(stored, ':', at, true)
    local nameLength = colon and decimal(string.sub(stored, at, colon - 1))
    if not nameLength or colon + nameLength > #stored then
      return nil
    end
    local headerName = string.sub(stored, colon + 1, colon + nameLength)
    at = colon + nameLength + 1
    colon = string.find(stored, ':', at, true)
    local valueLength = colon and decimal(string.sub(stored, at, colon - 1))
    if not valueLength or colon + valueLength > #stored then
      return nil
    end
    if headerName == name then
      return string.sub(stored, colon + 1, colon + valueLength)
    end
    at = colon + valueLength + 1
  end
  return nil
end

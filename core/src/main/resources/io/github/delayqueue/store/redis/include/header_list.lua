-- header_list: reads the header list of a stored message's body (bodyAt: the index of the ':' before
-- the body, as header() returns it). The body is "1:<header count>:" then per header
-- "<name length>:<name><value length>:<value>", then the payload (see MessageFormat); counts and
-- lengths are 1 to 18 digits, as MessageFormat reads them. Returns a list with, per header, its
-- name, the first and last index of its whole entry, and the first index of its value; then the
-- index where the payload starts. Nothing if the body is not in that format.
-- @include decimal
local function header_list(stored, bodyAt)
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
  local entries = {}
  for i = 1, count do
    local entryAt = at
    colon = string.find(stored, ':', at, true)
    local nameLength = colon and decimal(string.sub(stored, at, colon - 1))
    if not nameLength or colon + nameLength > #stored then
      return nil
    end
    local name = string.sub(stored, colon + 1, colon + nameLength)
    at = colon + nameLength + 1
    colon = string.find(stored, ':', at, true)
    local valueLength = colon and decimal(string.sub(stored, at, colon - 1))
    if not valueLength or colon + valueLength > #stored then
      return nil
    end
    entries[i] = { name, entryAt, colon + valueLength, colon + 1 }
    at = colon + valueLength + 1
  end
  return entries, at
end

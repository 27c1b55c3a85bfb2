-- with_error: the stored message with its "delay-queue-error" header set to err, after the others,
-- or without it when err is ''; the header and every other header and the payload unchanged.
-- bodyAt: the index of the ':' before the body, as header() returns it. The body is
-- "1:<header count>:" then per header "<name length>:<name><value length>:<value>", then the
-- payload (see MessageFormat). Returns nil if the body is not in that format.
-- @include decimal
local function with_error(stored, bodyAt, err)
  local name = 'delay-queue-error'
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
  local kept, keptCount = {}, 0
  for _ = 1, count do
    local entryAt = at
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
    at = colon + valueLength + 1
    if headerName ~= name then
      kept[#kept + 1] = string.sub(stored, entryAt, at - 1)
      keptCount = keptCount + 1
    end
  end
  if err ~= '' then
    kept[#kept + 1] = #name .. ':' .. name .. #err .. ':' .. err
    keptCount = keptCount + 1
  end
  return string.sub(stored, 1, bodyAt) .. '1:' .. keptCount .. ':' .. table.concat(kept) .. string.sub(stored, at)
end

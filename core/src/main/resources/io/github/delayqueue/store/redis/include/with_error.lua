-- with_error: the stored message with its "delay-queue-error" header set to err, after the others,
-- or without it when err is ''; every other header and the payload unchanged (bodyAt as header()
-- returns it). Returns nil if the body is not in the stored format (see header_list).
-- @include header_list
local function with_error(stored, bodyAt, err)
  local name = 'delay-queue-error'
  local entries, payloadAt = header_list(stored, bodyAt)
  if not entries then
    return nil
  end
  local kept = {}
  for _, entry in ipairs(entries) do
    if entry[1] ~= name then
      kept[#kept + 1] = string.sub(stored, entry[2], entry[3])
    end
  end
  if err ~= '' then
    kept[#kept + 1] = #name .. ':' .. name .. #err .. ':' .. err
  end
  return string.sub(stored, 1, bodyAt) .. '1:' .. #kept .. ':' .. table.concat(kept) .. string.sub(stored, payloadAt)
end

-- dead_letter_headers: the body of a dead letter as its dead-letter queue stores it (bodyAt as
-- header() returns it): every header kept but the deduplication window (an acknowledgement in the
-- queue remembers nothing) and earlier dead-letter headers, then "delay-queue-dead-id" (the id it
-- had), "delay-queue-dead-error" (its last error) and "delay-queue-dead-attempts" (the attempts
-- made), then the payload; the part of stored from the ':' before the body on. Returns the body
-- unchanged when it is not in the stored format (see header_list).
-- @include header_list
local dropped = {['delay-queue-dedupe-ms'] = true, ['delay-queue-dead-id'] = true,
  ['delay-queue-dead-error'] = true, ['delay-queue-dead-attempts'] = true}
local function dead_letter_headers(stored, bodyAt, id, err, attempts)
  local entries, payloadAt = header_list(stored, bodyAt)
  if not entries then
    return string.sub(stored, bodyAt)
  end
  local kept = {}
  for _, entry in ipairs(entries) do
    if not dropped[entry[1]] then
      kept[#kept + 1] = string.sub(stored, entry[2], entry[3])
    end
  end
  local added = {{'delay-queue-dead-id', id}, {'delay-queue-dead-error', err},
    {'delay-queue-dead-attempts', tostring(attempts)}}
  for _, header in ipairs(added) do
    kept[#kept + 1] = #header[1] .. ':' .. header[1] .. #header[2] .. ':' .. header[2]
  end
  return ':1:' .. #kept .. ':' .. table.concat(kept) .. string.sub(stored, payloadAt)
end

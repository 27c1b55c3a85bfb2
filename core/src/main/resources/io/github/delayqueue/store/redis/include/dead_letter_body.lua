-- dead_letter_body: the body of a dead letter as its dead-letter queue stores it: its headers but
-- the deduplication window (an acknowledgement in the queue remembers nothing) and earlier
-- dead-letter and error headers, then "delay-queue-dead-id" (the id it had),
-- "delay-queue-dead-error" (its last error), "delay-queue-dead-attempts" (the attempts made) and
-- "delay-queue-error" (its last error again, the previous error of its first delivery there), then
-- its payload. A body not in the stored format (see header_list) becomes the payload whole, and so
-- does the whole stored message when its header is unreadable (bodyAt nil), so that the listener
-- of dead letters gets it with its error all the same.
-- @include header_list
local dropped = {['delay-queue-dedupe-ms'] = true, ['delay-queue-dead-id'] = true,
  ['delay-queue-dead-error'] = true, ['delay-queue-dead-attempts'] = true, ['delay-queue-error'] = true}
local function dead_letter_body(stored, bodyAt, id, err, attempts)
  local kept = {}
  local payload = stored
  local entries, payloadAt
  if bodyAt then
    entries, payloadAt = header_list(stored, bodyAt)
    payload = string.sub(stored, bodyAt + 1)
  end
  if entries then
    for _, entry in ipairs(entries) do
      if not dropped[entry[1]] then
        kept[#kept + 1] = string.sub(stored, entry[2], entry[3])
      end
    end
    payload = string.sub(stored, payloadAt)
  end
  local added = {{'delay-queue-dead-id', id}, {'delay-queue-dead-error', err},
    {'delay-queue-dead-attempts', tostring(attempts)}, {'delay-queue-error', err}}
  for _, header in ipairs(added) do
    kept[#kept + 1] = #header[1] .. ':' .. header[1] .. #header[2] .. ':' .. header[2]
  end
  return '1:' .. #kept .. ':' .. table.concat(kept) .. payload
end

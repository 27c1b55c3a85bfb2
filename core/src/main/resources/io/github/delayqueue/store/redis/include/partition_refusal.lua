-- partition_refusal: the error reply that refuses a call made with a stale partition count, or nil
-- when the call may go on. Call it first and return what it returns, before anything else is read
-- or written. A partition's count marker (KEYS of role "partition count") is, for partition 0 (the
-- topic itself), the topic's number of partitions (absent for 1); for another partition the count
-- it serves, "<count>" or "<count>:<change token>" (absent: never marked, read as 1), or, while a
-- change of the count is on its way, "?<new count>:<change token>", which refuses every call. The
-- call goes on only when the marker names the caller's count: else the caller spreads the topic
-- over another count than Redis does (its count is stale, or a change of it is on its way), and a
-- message it stored or looked for by id there could be stranded or missed. The reply
-- "DQPARTITIONS <marker, empty if absent>" names what the marker holds.
local function partition_refusal(markerKey, count)
  local marker = redis.call('GET', markerKey)
  local found = '1'
  if marker then
    found = string.match(marker, '^%d+')
  end
  if found ~= count then
    return redis.error_reply('DQPARTITIONS ' .. (marker or ''))
  end
end

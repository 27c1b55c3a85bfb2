-- wait_to_end: what ends the strict-order wait of a message that leaves it before its end (see
-- retry.lua, ARGV[8] = 2): cancelled or rescheduled. Reads only (its ZSCOREs fail on a group waits
-- key of the wrong type, before any write): returns the members of the group waits ZSET (waitsKey)
-- to remove, the message's "\1<id>" entry and its group's (groupsKey: id -> group) when the group
-- waits for this message (the same end), or nil when the message has no entry. Then a resume of
-- the group ends its pause, which lasts until the wait's end otherwise. One read for a message
-- that never waited.
local function wait_to_end(waitsKey, groupsKey, id)
  local own = redis.call('ZSCORE', waitsKey, '\1' .. id)
  if not own then
    return nil
  end
  local members = {'\1' .. id}
  local group = redis.call('HGET', groupsKey, id)
  if group and redis.call('ZSCORE', waitsKey, group) == own then
    members[2] = group
  end
  return members
end

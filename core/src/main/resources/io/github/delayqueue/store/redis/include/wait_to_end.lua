-- wait_to_end: what ends the strict-order wait of a message that leaves it before its end (see
-- retry.lua, ARGV[8] = 2): cancelled, rescheduled or replaced. Reads only (its ZSCOREs fail on a
-- group waits key of the wrong type, before any write); end_wait writes what it returns. Returns nil
-- when the message has no entry in the group waits ZSET (waitsKey), else {members = the entries to
-- remove, group = its group, later = the end its group waits to now (epoch ms)}: the message's
-- "\1<id>" entry goes, and its group's (groupsKey: id -> group) when the group waits for this
-- message (the same end). Another message of the group may wait too (no group concurrency, or one
-- of 2 or more): the group then waits until the latest of their ends (later), found among the 100
-- waits that end last before this one (a wait whose message has no groups hash entry, lost, counts
-- as the group's); when all 100 belong to other groups, the group keeps its end (it waits longer
-- than it must, never less). Then a resume of the group ends its pause, which
-- lasts until the group's wait ends otherwise. One read for a message that never waited.
local function wait_to_end(waitsKey, groupsKey, id)
  local own = redis.call('ZSCORE', waitsKey, '\1' .. id)
  if not own then
    return nil
  end
  local ending = {members = {'\1' .. id}}
  local group = redis.call('HGET', groupsKey, id)
  if not group or redis.call('ZSCORE', waitsKey, group) ~= own then
    return ending
  end
  local others = redis.call('ZREVRANGEBYSCORE', waitsKey, own, '(' .. string.format('%d', now_ms()),
    'WITHSCORES', 'LIMIT', 0, 100)
  for i = 1, #others, 2 do
    local member = others[i]
    local owner = string.byte(member, 1) == 1 and member ~= ending.members[1]
      and (redis.call('HGET', groupsKey, string.sub(member, 2)) or true)
    if owner == group or owner == true then
      if others[i + 1] ~= own then
        ending.group = group
        ending.later = others[i + 1]
      end
      return ending
    end
  end
  if #others < 200 then
    ending.members[2] = group
  end
  return ending
end

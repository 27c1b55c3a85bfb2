-- slots_to_free: reads what ending the flight of messages frees (see free_slots): the group of each
-- message of a group (groups HASH), then for each of those groups its slots taken (group slots
-- HASH: group -> its messages in flight, counted by claim), whether it is parked in the rotation
-- (at its concurrency limit: scored +inf, see claim.lua), and its finish tag with the topic's
-- virtual time (group tags HASH). Checks the type of the keys free_slots writes. One read while the
-- topic uses no group; returns nil then, or when no message named has a group. Call it before the
-- script's first write, with the ids whose leases the script ends, each once.
-- @include expect
-- @include group_counts
-- @include uses_groups
local function slots_to_free(groupsKey, slotsKey, tagsKey, rotationKey, ids)
  if #ids == 0 or not uses_groups(groupsKey) then
    return nil
  end
  local order, freed = group_counts(groupsKey, ids)
  if #order == 0 then
    return nil
  end
  expect(slotsKey, 'hash')
  expect(tagsKey, 'hash')
  expect(rotationKey, 'zset')
  return {
    keys = {slotsKey, tagsKey, rotationKey},
    order = order,
    freed = freed,
    taken = redis.call('HMGET', slotsKey, unpack(order)),
    scores = redis.call('ZMSCORE', rotationKey, unpack(order)),
    tags = redis.call('HMGET', tagsKey, '\1V', unpack(order))
  }
end

-- regroup: after the group ready set was lost (moved aside as of the wrong type), make ready again
-- in their groups the stored messages of groups that are neither scheduled nor in flight, so that
-- none is left stored and in no index (state: ready -> ready). Not a transition of a message. Walks
-- the groups hash from a cursor, a chunk a call; drops its entries of ids no longer stored.
-- KEYS[1] messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[2] scheduled ZSET  id scored by due time; only read
-- KEYS[3] in-flight ZSET  id scored by lease deadline; only read
-- KEYS[4] priorities HASH id -> priority of messages sent with one above 0; only read
-- KEYS[5] groups HASH       id -> group of messages sent with one
-- KEYS[6] group ready ZSET  ready messages of groups, see group_member
-- KEYS[7] group counts HASH group -> its members in the group ready ZSET
-- KEYS[8] group tags HASH   the virtual time and the finish tag of each group in the rotation
-- KEYS[9] group rotation ZSET groups with ready messages, scored by finish tag
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the cursor of the groups hash to go on from ("0" to start)
-- ARGV[4] about how many entries to look at (HSCAN's COUNT)
-- Returns {the cursor to go on from ("0" once the walk is done), messages made ready again}.
-- Replayed: harmless (a member already in the set is not counted twice).
-- @include check_group_keys
-- @include collect_member
-- @include header
-- @include join_groups
local scan = redis.call('HSCAN', KEYS[5], ARGV[3], 'COUNT', tonumber(ARGV[4]))
local entries = scan[2]
local ids, groups = {}, {}
for k = 1, #entries, 2 do
  ids[#ids + 1] = entries[k]
  groups[#groups + 1] = entries[k + 1]
end
if #ids == 0 then
  return {scan[1], 0}
end
local stored = redis.call('HMGET', KEYS[1], unpack(ids))
local scheduled = redis.call('ZMSCORE', KEYS[2], unpack(ids))
local inFlight = redis.call('ZMSCORE', KEYS[3], unpack(ids))
local priorities = redis.call('HMGET', KEYS[4], unpack(ids))
check_group_keys(5)
local order, byGroup, gone = {}, {}, {}
for k, id in ipairs(ids) do
  local group = groups[k]
  if not stored[k] then
    gone[#gone + 1] = id
  elseif not scheduled[k] and not inFlight[k] and #group > 0 and not string.find(group, '%c') then
    local _, due = header(stored[k])
    if due then
      collect_member(order, byGroup, group, priorities[k], due, id)
    end
  end
end
local added = 0
if #order > 0 then
  added = join_groups(5, order, byGroup)
end
if #gone > 0 then
  redis.call('HDEL', KEYS[5], unpack(gone))
end
if added > 0 then
  signal(ARGV[1], 'r' .. ARGV[2])
end
return {scan[1], added}

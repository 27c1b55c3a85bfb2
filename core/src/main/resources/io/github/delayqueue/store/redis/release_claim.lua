-- release_claim: hand back what a claim leased when its consumer does not take the reply, e.g. it
-- stopped while the claim was unanswered or after it failed (state: in flight -> ready, at the head
-- of the ready list of its priority, or back in its group, in the order claimed; attempts
-- unchanged). The ids come from
-- the consumer's claim record, so the consumer need not have seen the reply: sent on the claim's
-- connection after it, this runs after the claim, whatever becomes of the replies. When it runs
-- first (another connection: dedicated or pooled, a Cluster re-routing the claim), it records the
-- claim as having leased nothing, so that the claim, if it runs later, leases nothing either.
-- KEYS[1] in-flight ZSET      id scored by lease deadline (epoch ms)
-- KEYS[2] ready LIST          ids waiting for a consumer
-- KEYS[3] leases HASH         id -> lease token
-- KEYS[4] claim record STRING the consumer's last claim that leased messages (see claim.lua)
-- KEYS[5] priorities HASH  id -> priority of messages sent with one above 0; only read
-- KEYS[6] ready 1 LIST     ids of priority 1 waiting for a consumer, oldest first
-- KEYS[7] ready 2 LIST     the same for priority 2
-- KEYS[8] ready 3 LIST     the same for priority 3
-- KEYS[9] ready 4 LIST     the same for priority 4
-- KEYS[10] ready 5 LIST    the same for priority 5
-- KEYS[11] ready 6 LIST    the same for priority 6
-- KEYS[12] ready 7 LIST    the same for priority 7
-- KEYS[13] ready 8 LIST    the same for priority 8
-- KEYS[14] ready 9 LIST    the same for priority 9
-- KEYS[15] groups HASH       id -> group of messages sent with one (see uses_groups); only read
-- KEYS[16] group ready ZSET  ready messages of groups, see group_member
-- KEYS[17] group counts HASH group -> its members in the group ready ZSET
-- KEYS[18] group tags HASH   the virtual time and the finish tag of each group in the rotation
-- KEYS[19] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[20] messages HASH id -> stored message; only read, for the rank of a message of a group
-- KEYS[21] group slots HASH  group -> its messages in flight (see free_slots)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] the claim's lease token: the consumer's id, a dot, and a number that grows with each claim
-- ARGV[4] the lease length in ms: how long the record kept for a claim that has not run lasts
-- Returns the ids handed back, in the order claimed: those of the recorded claim still leased to
-- its token; none when the consumer's last claim has another token, or it has none (the claim
-- leased nothing, did not run, or its record expired with the lease). The record stays: the same
-- claim sent again then returns nothing. When the consumer has no record, or the record is of an
-- earlier claim of the consumer (a smaller number), the claim has not run (a claim that runs records
-- itself, or deletes the record when it leases nothing): the record becomes the claim's, without
-- messages, for the lease length, and the claim sent again or late finds it and leases nothing.
-- Replayed: idempotent (the second run finds no lease for the token and returns none).
-- @include hand_back
-- The consumer's id and the claim's number, from a token.
local function token_parts(token)
  local consumer, number = string.match(token, '^(.*)%.(%d+)$')
  return consumer, tonumber(number)
end
local record = redis.call('GET', KEYS[4])
local claim = record and cmsgpack.unpack(record)
if not claim or claim[1] ~= ARGV[3] then
  local earlier = not claim
  if claim then
    local consumer, number = token_parts(ARGV[3])
    local recordConsumer, recordNumber = token_parts(claim[1])
    earlier = consumer ~= nil and recordNumber ~= nil and consumer == recordConsumer and recordNumber < number
  end
  if earlier then
    redis.call('SET', KEYS[4], cmsgpack.pack({ARGV[3], 0, 0}), 'PX', math.max(1, tonumber(ARGV[4])))
  end
  return {}
end
local ids = {}
for i = 4, #claim do
  ids[#ids + 1] = claim[i]
end
if #ids == 0 then
  return {}
end
local held = redis.call('HMGET', KEYS[3], unpack(ids))
local released = {}
for k, id in ipairs(ids) do
  if held[k] == ARGV[3] then
    released[#released + 1] = id
  end
end
if #released == 0 then
  return released
end
hand_back(KEYS[1], KEYS[2], KEYS[3], 5, released, KEYS[20], 15, KEYS[21])
signal(ARGV[1], 'r' .. ARGV[2])
return released

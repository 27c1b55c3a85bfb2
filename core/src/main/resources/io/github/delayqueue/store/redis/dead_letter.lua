-- dead_letter: a message failed for good; keep it with its attempts and last error in the
-- dead-letter set (state: in flight -> dead). Its priority moves from the priorities hash to the
-- dead priorities hash. An earlier dead letter of the same id (sent again after it died) is kept
-- as "<id>~<time it died>", with its priority. While the topic's dead letters are listened to, a
-- copy goes into its dead-letter queue, ready at once with its priority, and its consumers are
-- signalled. Then the
-- oldest dead letters beyond the topic's retention are deleted (at most 100).
-- KEYS[1] in-flight ZSET       id scored by lease deadline (epoch ms)
-- KEYS[2] messages HASH        id -> "<attempts>:<due ms>:<body>"
-- KEYS[3] dead ZSET            id scored by the time it died (epoch ms)
-- KEYS[4] dead messages HASH   id -> "<attempts>:<due ms>:<body>"
-- KEYS[5] dead errors HASH     id -> last error
-- KEYS[6] leases HASH          id -> lease token
-- KEYS[7] priorities HASH      id -> priority of stored messages sent with one above 0
-- KEYS[8] dead priorities HASH id -> priority of dead letters that had one above 0
-- KEYS[9] dead-letters watch STRING    present while the topic's dead letters are listened to
-- KEYS[10] dead-letters messages HASH  the dead-letter queue's stored messages
-- KEYS[11] dead-letters ready LIST     the dead-letter queue's ready ids
-- KEYS[12] dead-letters priorities HASH the dead-letter queue's priorities of its messages
-- KEYS[13] dead-letters ready 1 LIST   the dead-letter queue's ready ids of priority 1
-- KEYS[14] dead-letters ready 2 LIST   the same for priority 2
-- KEYS[15] dead-letters ready 3 LIST   the same for priority 3
-- KEYS[16] dead-letters ready 4 LIST   the same for priority 4
-- KEYS[17] dead-letters ready 5 LIST   the same for priority 5
-- KEYS[18] dead-letters ready 6 LIST   the same for priority 6
-- KEYS[19] dead-letters ready 7 LIST   the same for priority 7
-- KEYS[20] dead-letters ready 8 LIST   the same for priority 8
-- KEYS[21] dead-letters ready 9 LIST   the same for priority 9
-- KEYS[22] groups HASH         id -> group of stored messages sent with one (a dead letter keeps its
--          group in its "delay-queue-group" header, which replay reads)
-- KEYS[23] group slots HASH   group -> its messages in flight (see free_slots)
-- KEYS[24] group tags HASH    the virtual time and the finish tag of each group in the rotation
-- KEYS[25] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- ARGV[1] id
-- ARGV[2] lease token given by claim (proof of the lease)
-- ARGV[3] last error
-- ARGV[4] signal channel of the dead-letter queue
-- ARGV[5] the dead-letter queue's name (the partition's, then "#dead")
-- ARGV[6] the most dead letters the dead set keeps, 0 for no bound (retention, see trim_dead)
-- ARGV[7] ms a dead letter is kept, 0 for no bound
-- ARGV[8] 1 if the caller listens to the topic's dead letters (sets a lost watch again), else 0
-- ARGV[9] signal channel
-- ARGV[10] topic
-- A message of a group frees its slot (free_slots): a group parked at its concurrency limit rejoins
-- the rotation and the topic's consumers are signalled.
-- A stored message whose header is unreadable is kept exactly as it was.
-- Returns 1 if dead-lettered, 0 if the lease was lost.
-- Replayed: idempotent (the second run finds no lease and returns 0).
-- @include bury
-- @include check_bury
-- @include expect
-- @include free_slots
-- @include header
-- @include holds_lease
-- @include slots_to_free
-- @include trim_dead
-- @include uses_groups
-- @include with_header
local id = ARGV[1]
if not holds_lease(KEYS[6], id, ARGV[2]) then
  return 0
end
local stored = redis.call('HGET', KEYS[2], id)
local priority = redis.call('HGET', KEYS[7], id)
expect(KEYS[1], 'zset')
local grouped = uses_groups(KEYS[22])
local freeing = grouped and slots_to_free(KEYS[22], KEYS[23], KEYS[24], KEYS[25], {id})
local dead = check_bury(KEYS[3], KEYS[4], KEYS[5], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], 13, ARGV[8])
if stored then
  local attempts, due, bodyAt = header(stored)
  local updated = stored
  if attempts then
    updated = with_header(stored, attempts + 1, due, bodyAt)
  end
  local now = now_ms()
  bury(dead, id, updated, ARGV[3], priority, now)
  trim_dead(dead, tonumber(ARGV[6]), tonumber(ARGV[7]), now)
  redis.call('HDEL', KEYS[2], id)
  if priority then
    redis.call('HDEL', KEYS[7], id)
  end
  if grouped then
    redis.call('HDEL', KEYS[22], id)
  end
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[6], id)
if free_slots(freeing) then
  signal(ARGV[9], 'r' .. ARGV[10])
end
if dead.copied then
  signal(ARGV[4], 'r' .. ARGV[5])
end
return stored and 1 or 0

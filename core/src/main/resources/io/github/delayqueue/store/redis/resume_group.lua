-- resume_group: ends the pause of one group of a topic (see pause_group): a group with ready
-- messages parked in the rotation rejoins it at its finish tag, or at the topic's virtual time when
-- that is later (no credit for time away), and the topic's consumers are signalled. Should the
-- group be at its concurrency limit, the next claim parks it again. Resuming a group that is not
-- paused changes nothing, but for a group parked with ready messages: it rejoins too (its pause may
-- have been lost with the pauses key, and nothing else would put it back; one at its limit is
-- parked again by the next claim). No message changes state.
-- A resume does not end a strict-order wait (KEYS[7], written by retry.lua: a message of the group
-- waits in it for its next attempt, and only the group's pause holds it): while that wait has not
-- ended, the group stays paused until its end (the operator's pause is over, not the wait), stays
-- parked, and the consumers are signalled when that end comes sooner than the pause's, so that
-- idle ones learn it.
-- KEYS[1] group pauses ZSET   group -> when its pause ends (epoch ms; +inf: when it is resumed)
-- KEYS[2] group counts HASH   group -> its members in the group ready ZSET; only read
-- KEYS[3] group tags HASH     the virtual time, and the finish tag of each group in the rotation;
--                             only read
-- KEYS[4] group rotation ZSET groups with ready messages, scored by finish tag (+inf: parked)
-- KEYS[5] partition count STRING the count marker of this partition (see partition_refusal)
-- KEYS[6] cancels ZSET       tokens of the requests that cancelled a message (see cancel) or resumed
--                            a paused group, scored by when they may be forgotten (epoch ms);
--                            expires a minute after the last; read first, so a key of the wrong type
--                            fails the call before it changes anything
-- KEYS[7] group waits ZSET    group -> when its strict-order wait ends (epoch ms), see retry.lua;
--                             when the group's wait has ended, the waits that ended leave it (the
--                             group's pause may end here, where no claim finds it ended)
-- ARGV[1] signal channel
-- ARGV[2] topic
-- ARGV[3] group
-- ARGV[4] the number of partitions the caller spreads the topic over
-- ARGV[5] request token: new for each resume request, kept when it is sent again
-- Returns 1 if the group was paused (its pause not yet ended), else 0; or the error reply of
-- partition_refusal, having changed nothing, when ARGV[4] is not the partition's count.
-- Replayed: idempotent. The request's token is kept at least a minute once it resumed a paused
-- group, so that the same request sent again (the client lost its reply and sent it after a
-- reconnect) finds it and returns 1, changing nothing.
-- @include partition_refusal
local refused = partition_refusal(KEYS[5], ARGV[4])
if refused then
  return refused
end
if redis.call('ZSCORE', KEYS[6], ARGV[5]) then
  return 1
end
local group = ARGV[3]
local before = tonumber(redis.call('ZSCORE', KEYS[1], group))
local count = tonumber(redis.call('HGET', KEYS[2], group)) or 0
local score = redis.call('ZSCORE', KEYS[4], group)
local tags = redis.call('HMGET', KEYS[3], '\1V', group)
local now = now_ms()
local waitEnd = tonumber(redis.call('ZSCORE', KEYS[7], group))
if waitEnd and waitEnd > now then
  -- The wait goes on: the group stays paused until it ends, and parked.
  if not before or before ~= waitEnd then
    redis.call('ZADD', KEYS[1], string.format('%d', waitEnd), group)
  end
  if before and (before == math.huge or before > waitEnd) then
    signal(ARGV[1], 'r' .. ARGV[2])
  end
  if score and tonumber(score) ~= math.huge then
    redis.call('ZADD', KEYS[4], 'inf', group)
  end
elseif before then
  redis.call('ZREM', KEYS[1], group)
end
if waitEnd and waitEnd <= now then
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now)
end
if (not waitEnd or waitEnd <= now) and count > 0 and (not score or tonumber(score) == math.huge) then
  local virtual = tonumber(tags[1]) or 0
  redis.call('ZADD', KEYS[4], string.format('%.17g', math.max(tonumber(tags[2]) or virtual, virtual)), group)
  signal(ARGV[1], 'r' .. ARGV[2])
end
if before and (before == math.huge or before > now) then
  if redis.call('ZCARD', KEYS[6]) >= 100 then
    redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
  end
  redis.call('ZADD', KEYS[6], now + 60000, ARGV[5])
  redis.call('PEXPIRE', KEYS[6], 60000)
  return 1
end
return 0

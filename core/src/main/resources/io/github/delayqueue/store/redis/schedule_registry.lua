-- schedule_registry: registers the topic a recurring schedule's name sends to, forgets it, or reads
-- the registry the schedule pollers look in. Not a transition of a message: the schedule itself
-- lives in its partition (save_schedule, remove_schedule). A name is registered to one topic at a
-- time, so of two instances saving one name on two topics at once one is refused. Besides the
-- names, the registry keeps each topic that has held a schedule ("~<topic>", until a poller finds
-- it empty and no name registered to it for longer than a save takes), so that the pollers read
-- that topic's partitions and find a schedule whose name a race or a lost write left unregistered, and when each name was last claimed ("~#<name>"), so that a name is
-- taken from another topic only once no save there can still be on its way.
-- KEYS[1] schedule registry HASH  name -> topic; "~<topic>" -> when a name was last claimed for it
--         (epoch ms, Redis clock), for every topic that holds or held one until a poller that
--         found it empty forgets it; "~#<name>" -> when the name was last claimed
-- ARGV[1] 'claim', 'release', 'forget-topic' or 'read'
-- ARGV[2] name ('claim' and 'release' only)
-- ARGV[3] topic ('claim', 'release' and 'forget-topic' only)
-- ARGV[4] 'claim' only: the topic the caller found registered and takes the name from ('' for none)
-- ARGV[5] ms after its last claim from which a name may be taken from another topic ('claim'),
--         released ('release'; 0: at once) or a topic forgotten ('forget-topic')
-- Returns {1 if the name is registered to ARGV[3] after a claim, or was forgotten by a release, or
-- the topic by 'forget-topic', else 0, the topic the name is registered to now ('' for none), then
-- for 'read' two values per entry of the registry: field and value}.
-- A time that is not a number (written by something else) counts as 0: long ago.
-- Replayed: harmless (a claim finds the name registered to its topic and returns 1; a release finds
-- it gone and returns 0; a topic forgotten is forgotten).
local current = false
if ARGV[1] == 'claim' or ARGV[1] == 'release' then
  current = redis.call('HGET', KEYS[1], ARGV[2])
end
if ARGV[1] == 'claim' then
  local now = now_ms()
  if current and current ~= ARGV[3] then
    local claimed = tonumber(redis.call('HGET', KEYS[1], '~#' .. ARGV[2]) or '0') or 0
    if current ~= ARGV[4] or now - claimed < tonumber(ARGV[5]) then
      return {0, current}
    end
  end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3], '~' .. ARGV[3], now, '~#' .. ARGV[2], now)
  return {1, ARGV[3]}
elseif ARGV[1] == 'release' then
  if current ~= ARGV[3] then
    return {0, current or ''}
  end
  if tonumber(ARGV[5]) > 0
      and now_ms() - (tonumber(redis.call('HGET', KEYS[1], '~#' .. ARGV[2]) or '0') or 0) < tonumber(ARGV[5]) then
    return {0, current}
  end
  redis.call('HDEL', KEYS[1], ARGV[2], '~#' .. ARGV[2])
  return {1, ''}
elseif ARGV[1] == 'forget-topic' then
  local claimed = tonumber(redis.call('HGET', KEYS[1], '~' .. ARGV[3]) or '0') or 0
  if now_ms() - claimed < tonumber(ARGV[5]) then
    return {0, ''}
  end
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if all[i + 1] == ARGV[3] and string.sub(all[i], 1, 1) ~= '~' then
      return {0, ''}
    end
  end
  redis.call('HDEL', KEYS[1], '~' .. ARGV[3])
  return {1, ''}
end
local out = {1, ''}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all do
  out[#out + 1] = all[i]
end
return out

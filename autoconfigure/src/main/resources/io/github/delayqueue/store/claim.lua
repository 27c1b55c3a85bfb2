-- claim: lease ready messages to a consumer (state: ready -> in flight).
-- Ids left in the ready list by cancel or reschedule (no stored message, or scheduled again) and
-- ids already in flight are dropped, so they are never delivered twice. The broker may make a
-- message ready shortly before it is due (its lookahead); such a message counts against ARGV[3],
-- the consumer holds it and invokes the listener at its due time. The call ends when ARGV[1] due
-- messages are claimed, or at a message over its limit: the ids not taken go back to the head of
-- the list, in order.
-- KEYS[1] ready LIST       ids waiting for a consumer
-- KEYS[2] in-flight ZSET   id scored by lease deadline (epoch ms)
-- KEYS[3] messages HASH    id -> "<attempts>:<due ms>:<body>"
-- KEYS[4] scheduled ZSET   id scored by due time
-- ARGV[1] largest number of due messages to claim
-- ARGV[2] lease length in ms
-- ARGV[3] largest number of messages not yet due to claim
-- Returns {lease deadline (epoch ms), claim time (epoch µs), id, stored message, id, stored message, ...},
-- or {0, 0} when the ready list is empty.
-- An empty ready list costs one read.
local wanted = tonumber(ARGV[1])
local wantedEarly = tonumber(ARGV[3])
-- A few more than the due ones still wanted, for early ones among them; the rest goes back.
local ids = redis.call('LPOP', KEYS[1], wanted + math.min(wantedEarly, 16))
if not ids then
  return {0, 0}
end
local nowUs = now_us()
local now = math.floor(nowUs / 1000)
local deadline = now + tonumber(ARGV[2])
local out = {deadline, nowUs}
local claimed = 0
local claimedEarly = 0
local popped = 0
local full = false
local taken = {}
while ids do
  -- Three reads for the whole chunk: rescheduled ids (in the schedule), ids already in flight,
  -- and the stored messages (none for cancelled ids).
  local scheduled = redis.call('ZMSCORE', KEYS[4], unpack(ids))
  local inFlight = redis.call('ZMSCORE', KEYS[2], unpack(ids))
  local stored = redis.call('HMGET', KEYS[3], unpack(ids))
  local leases = {}
  for i, id in ipairs(ids) do
    if not scheduled[i] and not inFlight[i] and stored[i] and not taken[id] then
      local _, due = header(stored[i])
      local early = due and due > now
      if (early and claimedEarly >= wantedEarly) or (not early and claimed >= wanted) then
        local rest = {}
        for back = #ids, i, -1 do
          rest[#rest + 1] = ids[back]
        end
        redis.call('LPUSH', KEYS[1], unpack(rest))
        full = true
        break
      end
      taken[id] = true
      leases[#leases + 1] = deadline
      leases[#leases + 1] = id
      out[#out + 1] = id
      out[#out + 1] = stored[i]
      if early then
        claimedEarly = claimedEarly + 1
      else
        claimed = claimed + 1
      end
    end
    popped = popped + 1
  end
  if #leases > 0 then
    redis.call('ZADD', KEYS[2], unpack(leases))
  end
  if full or claimed >= wanted or popped >= 1000 then
    break
  end
  ids = redis.call('LPOP', KEYS[1], (wanted - claimed) + math.min(wantedEarly - claimedEarly, 16))
end
return out

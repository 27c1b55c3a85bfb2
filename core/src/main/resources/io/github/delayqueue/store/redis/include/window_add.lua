-- window_add: records a claim in the window: one entry "<µs>:<id>" per message taken (inFlight: the
-- claim's in-flight entries, {deadline, id, deadline, id, ...}); drops the entries that no longer
-- count and lets the key expire a period after its newest entry.
local function window_add(windowKey, periodUs, nowUs, inFlight)
  local at = string.format('%.0f', nowUs)
  local entries = {}
  for i = 2, #inFlight, 2 do
    entries[#entries + 1] = at
    entries[#entries + 1] = at .. ':' .. inFlight[i]
  end
  redis.call('ZREMRANGEBYSCORE', windowKey, '-inf', string.format('%.0f', nowUs - periodUs))
  redis.call('ZADD', windowKey, unpack(entries))
  redis.call('PEXPIRE', windowKey, math.ceil(periodUs / 1000))
end

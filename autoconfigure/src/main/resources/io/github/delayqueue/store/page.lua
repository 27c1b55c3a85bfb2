-- page: read one page of a topic's messages in one state, oldest first, without their payloads,
-- for the operations endpoint. Reads only: changes no state.
-- KEYS[1] state index ZSET or LIST  scheduled ZSET, ready LIST, in-flight ZSET or dead ZSET
-- KEYS[2] state messages HASH       messages HASH, or dead messages HASH for "d"
-- KEYS[3] dead errors HASH  id -> last error
-- KEYS[4] scheduled ZSET    id scored by due time
-- KEYS[5] in-flight ZSET    id scored by lease deadline
-- ARGV[1] state: "z" scheduled (by due time), "r" ready (list order), "i" in flight (by lease
--         deadline), "d" dead (by time of death)
-- ARGV[2] offset: rank (or list index) of the first message, 0-based
-- ARGV[3] largest number of messages
-- For "r", ids that claim would drop (cancelled, rescheduled or in flight since) are left out, so a
-- page may hold fewer messages than asked for.
-- Returns {entries in the index (list length for "r"), then five values per message: id,
--          score (due time, lease deadline or time of death; -1 for "r"), attempts, due time
--          (-1 and -1 when the stored message is gone or its header unreadable), last error or ""}.
local kind = ARGV[1]
local first = tonumber(ARGV[2])
local last = first + tonumber(ARGV[3]) - 1
local out = {}
local ids
if kind == 'r' then
  out[1] = redis.call('LLEN', KEYS[1])
  ids = redis.call('LRANGE', KEYS[1], first, last)
else
  out[1] = redis.call('ZCARD', KEYS[1])
  ids = redis.call('ZRANGE', KEYS[1], first, last, 'WITHSCORES')
end
local step = (kind == 'r') and 1 or 2
for i = 1, #ids, step do
  local id = ids[i]
  local score = (kind == 'r') and -1 or tonumber(ids[i + 1])
  if kind ~= 'r' or (not redis.call('ZSCORE', KEYS[4], id) and not redis.call('ZSCORE', KEYS[5], id)) then
    local stored = redis.call('HGET', KEYS[2], id)
    if kind ~= 'r' or stored then
      local attempts, due = nil, nil
      if stored then
        attempts, due = header(stored)
      end
      local err = (kind == 'd') and redis.call('HGET', KEYS[3], id) or ''
      out[#out + 1] = id
      out[#out + 1] = score
      out[#out + 1] = attempts or -1
      out[#out + 1] = due or -1
      out[#out + 1] = err or ''
    end
  end
end
return out

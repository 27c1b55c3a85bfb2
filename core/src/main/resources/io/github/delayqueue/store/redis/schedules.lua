-- schedules: reads the schedules of a partition with the Redis time their ticks are judged by.
-- Reads only: changes no state.
-- KEYS[1] schedules HASH          name -> "<next tick ms>:<paused 0 or 1>:<definition>"
-- Returns {the Redis time (epoch ms), then two values per schedule: name, state}.
local out = {now_ms()}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all do
  out[#out + 1] = all[i]
end
return out

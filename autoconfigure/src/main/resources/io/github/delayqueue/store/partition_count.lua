-- partition_count: compare the number of partitions a topic's messages were sent with, kept in
-- Redis, with an application's own, and take the application's where that strands nothing. Not a
-- transition of a message: the check that every application spreads a topic the same way.
-- KEYS[1] partition count STRING  the topic's count, absent for 1
-- ARGV[1] the application's count
-- ARGV[2] a count whose partitions (1 and up) the caller found empty, so that it may be
--         replaced; 0 for none. A count of 1 leaves no partition behind and is always replaced.
-- Returns {the count found, 1 if the key now holds ARGV[1] else 0}.
-- Replayed: the second run finds the application's count and returns it with 1.
local found = tonumber(redis.call('GET', KEYS[1]) or '1')
local wanted = tonumber(ARGV[1])
if found == wanted then
  return {found, 1}
end
if found ~= 1 and found ~= tonumber(ARGV[2]) then
  return {found, 0}
end
if wanted == 1 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return {found, 1}

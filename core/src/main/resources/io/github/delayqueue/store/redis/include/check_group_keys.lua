-- check_group_keys: checks the types of the group keys that join_groups() writes (KEYS[gbase + 1]
-- to KEYS[gbase + 4]: group ready ZSET, group counts HASH, group tags HASH, group rotation ZSET),
-- so that it cannot fail after the script's first write. Four O(1) reads.
-- @include expect
local function check_group_keys(gbase)
  expect(KEYS[gbase + 1], 'zset')
  expect(KEYS[gbase + 2], 'hash')
  expect(KEYS[gbase + 3], 'hash')
  expect(KEYS[gbase + 4], 'zset')
end

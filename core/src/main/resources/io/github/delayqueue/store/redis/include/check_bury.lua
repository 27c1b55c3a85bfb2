-- check_bury: checks the types of the dead keys, so that bury() cannot fail after the script's
-- first write, and returns them for bury(): {index = dead ZSET, messages = dead messages HASH,
-- errors = dead errors HASH, priorities = dead priorities HASH, prioritized = whether any dead
-- letter has a priority (HLEN of the dead priorities: one O(1) read)}.
-- @include expect
local function check_bury(deadKey, deadMessagesKey, deadErrorsKey, deadPrioritiesKey)
  expect(deadKey, 'zset')
  expect(deadMessagesKey, 'hash')
  expect(deadErrorsKey, 'hash')
  return {index = deadKey, messages = deadMessagesKey, errors = deadErrorsKey, priorities = deadPrioritiesKey,
    prioritized = redis.call('HLEN', deadPrioritiesKey) > 0}
end

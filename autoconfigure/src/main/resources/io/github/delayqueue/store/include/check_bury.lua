-- check_bury: checks the types of the dead keys, so that bury() cannot fail after the script's
-- first write.
-- @include expect
local function check_bury(deadKey, deadMessagesKey, deadErrorsKey)
  expect(deadKey, 'zset')
  expect(deadMessagesKey, 'hash')
  expect(deadErrorsKey, 'hash')
end

-- check_bury: checks the types of the dead keys, so that bury() cannot fail after the script's
-- first write, and returns them for bury(): {index = dead ZSET, messages = dead messages HASH,
-- errors = dead errors HASH, priorities = dead priorities HASH, prioritized = whether any dead
-- letter has a priority (HLEN of the dead priorities: one O(1) read), queue = the dead-letter
-- queue's {messages = HASH, ready = LIST, priorities = HASH, base = the index in KEYS of its ready
-- list of priority 1, those of 2 to 9 following} while its watch key exists (a listener of the
-- topic's dead letters started once), else false; copied = false until bury() copies one into it}.
-- listened is '1' when the caller's application listens to the topic's dead letters: a watch key
-- Redis lost (it came back empty) is then set again here, before any write of the script, so that
-- no dead letter dies unqueued until the watch's periodic check comes by.
-- @include expect
local function check_bury(deadKey, deadMessagesKey, deadErrorsKey, deadPrioritiesKey, watchKey, queueMessagesKey,
    queueReadyKey, queuePrioritiesKey, queueBase, listened)
  expect(deadKey, 'zset')
  expect(deadMessagesKey, 'hash')
  expect(deadErrorsKey, 'hash')
  local queue = false
  local watched = redis.call('EXISTS', watchKey) == 1
  if watched or listened == '1' then
    expect(queueMessagesKey, 'hash')
    expect(queueReadyKey, 'list')
    expect(queuePrioritiesKey, 'hash')
    for priority = 1, 9 do
      expect(KEYS[queueBase + priority - 1], 'list')
    end
    if not watched then
      redis.call('SET', watchKey, '1')
    end
    queue = {messages = queueMessagesKey, ready = queueReadyKey, priorities = queuePrioritiesKey, base = queueBase}
  end
  return {index = deadKey, messages = deadMessagesKey, errors = deadErrorsKey, priorities = deadPrioritiesKey,
    prioritized = redis.call('HLEN', deadPrioritiesKey) > 0, queue = queue, copied = false}
end

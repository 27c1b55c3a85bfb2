-- spublish_signal: how scripts send a wake-up signal on a Redis 7 Cluster, put in front of
-- common.lua instead of publish_signal.lua: SPUBLISH on the topic's own signal channel, which
-- hashes to the topic's slot, so the signal stays on the node that holds the topic.

-- Sends a wake-up signal ('b' .. topic or 'r' .. topic).
local function signal(channel, message)
  redis.call('SPUBLISH', channel, message)
end


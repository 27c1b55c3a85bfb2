-- publish_signal: how scripts send a wake-up signal, put in front of common.lua: PUBLISH on the
-- prefix's one signal channel, which every application subscribes to (on a Redis Cluster, PUBLISH
-- reaches every node). The channel is the script's "signal channel" argument.

-- Sends a wake-up signal ('b' .. topic or 'r' .. topic).
local function signal(channel, message)
  redis.call('PUBLISH', channel, message)
end


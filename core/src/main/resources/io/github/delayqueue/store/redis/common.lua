-- common: put in front of every other script of this folder when it is loaded (Redis 6.2 has no
-- shared script libraries), after the clock (server_clock.lua, or offset_clock.lua for a store
-- under test), which defines now_us() and now_ms(), and the signal (publish_signal.lua, or
-- spublish_signal.lua on a Redis 7 Cluster), which defines signal(); then come the helpers the
-- script names. Defines no state change of its own.
--
-- Helpers: each in its own file of include/, defining one local function of the file's name. A
-- script (or a helper) names each helper it calls on a line "-- @include <name>" of its header;
-- the loader puts every helper named, and the ones they name, once in front of the script, each
-- after those it calls. A script carries only the helpers it calls, as Lua creates each one anew
-- on every call.
--
-- Rules every script follows, so that a failure never leaves a message half moved:
-- * every command that can fail (a key of the wrong type) runs before the first write: a script
--   reads, or checks with expect(), each key it writes before it writes any;
-- * a move adds a message to its destination before it removes it from its source.

-- Scripts read TIME and then write: replicate their effects, not the script (needed on Redis 6.2
-- with lua-replicate-commands off; always the case from Redis 7 on).
redis.replicate_commands()

-- uses_groups: whether any stored message of the topic has a group. One O(1) read of the groups
-- HASH (id -> group, written by send for a message sent with a group, while it is stored:
-- scheduled, ready or in flight).
-- Groups: a message of a group, once due, waits in the group ready ZSET instead of a ready list,
-- and claims take from the groups that have ready messages in turn (see claim.lua). A script that
-- moves messages to ready takes the group keys last, from KEYS[gbase]: groups HASH, group ready
-- ZSET (member "<group>\0<rank>\0<id>", all scores 0, see group_member), group counts HASH
-- (group -> its members in the group ready ZSET), group tags HASH ("\1V" -> the topic's virtual
-- time; group -> its finish tag while it is in the rotation; "" -> the tag of the messages of no
-- group), group rotation ZSET (the groups with ready messages, scored by finish tag). While the
-- groups HASH is empty, the topic uses no group and the script does just what it did before.
local function uses_groups(groupsKey)
  return redis.call('HLEN', groupsKey) > 0
end

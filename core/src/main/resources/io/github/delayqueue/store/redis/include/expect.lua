-- expect: fails with Redis' own WRONGTYPE error, before any write, when a key holds another type
-- than kind ("hash", "zset", "list"); a missing key is fine. One O(1) read.
local probes = {hash = 'HLEN', zset = 'ZCARD', list = 'LLEN'}
local function expect(key, kind)
  redis.call(probes[kind], key)
end

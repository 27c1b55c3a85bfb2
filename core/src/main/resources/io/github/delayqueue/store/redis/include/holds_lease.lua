-- holds_lease: whether the lease on id is held by token (the token its claim was given).
local function holds_lease(leasesKey, id, token)
  return redis.call('HGET', leasesKey, id) == token
end

-- ready_list: the ready list of a priority (a number, a string from the priorities hash, or nil for
-- 0): KEYS[base + priority], or readyKey for 0.
local function ready_list(readyKey, base, priority)
  priority = tonumber(priority)
  if priority and priority > 0 then
    return KEYS[base + priority]
  end
  return readyKey
end

-- buried_name: the name under which an earlier dead letter of the same id is kept when the id dies
-- again: "<id>~<time it died>", with more '~' until the name is free. Reads only.
local function buried_name(deadMessagesKey, deadKey, id)
  local died = redis.call('ZSCORE', deadKey, id) or '0'
  local name = id .. '~' .. string.format('%.0f', tonumber(died))
  while redis.call('HEXISTS', deadMessagesKey, name) == 1 do
    name = name .. '~'
  end
  return name
end

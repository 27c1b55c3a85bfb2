-- id_of_name: the message id a dead letter's name stands for: the name without its ends of
-- "~<digits>~*", one after another, as TopicPartitions routes it; so "<id>~<time it died>~..."
-- (an earlier dead letter of the id, see buried_name) gives the id. A name without such an end is
-- the id itself. Reads nothing.
local function id_of_name(name)
  while true do
    local id = string.match(name, '^(.+)~%d+~*$')
    if not id then
      return name
    end
    name = id
  end
end

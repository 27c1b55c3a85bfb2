-- decimal: the number a text of 1 to 18 decimal digits spells, as MessageFormat reads the counts
-- and lengths of a body; nil for anything else (a sign, spaces, hex, a fraction, an exponent).
local function decimal(text)
  if #text >= 1 and #text <= 18 and not string.find(text, '%D') then
    return tonumber(text)
  end
  return nil
end

-- window_start: the score bound of the window that ends at nowUs: claims after it still count.
-- Rate limits (claim.lua): a rate-limited topic's window is a ZSET with one entry per message
-- claimed, scored by its claim time (epoch µs). A claim takes no more due messages than the
-- window has room for at its time, so no window of the period ever holds more than the limit.
local function window_start(periodUs, nowUs)
  return '(' .. string.format('%.0f', nowUs - periodUs)
end


local call, floor, ceil, max, format = redis.call, math.floor, math.ceil, math.max, string.format
local at = tonumber(ARGV[1]) * 1000 + tonumber(ARGV[2]) / 1000
for i = 1, #KEYS do
  local kind, limit, win = ARGV[3 * i], tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2])
  if kind == 'window' then
    local g = floor(win / {{WINDOW_BUCKETS}})
    if g < 1 then g = 1 end
    local kt = format('%d', floor(at / g))
    if (tonumber(call('HGET', KEYS[i], kt)) or 0) > 0 then
      call('HINCRBY', KEYS[i], kt, '-1')
      if call('HINCRBY', KEYS[i], 'n', '-1') <= 0 then call('DEL', KEYS[i]) end
    end
  elseif kind == 'gcra' then
    local v = call('GET', KEYS[i])
    if v then
      local t = call('TIME')
      local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
      local tat = tonumber(v) - win / limit
      if tat <= now then call('DEL', KEYS[i])
      else call('SET', KEYS[i], format('%.4f', tat), 'PX', format('%d', max(1, ceil(tat - now)))) end
    end
  end
end
return 1

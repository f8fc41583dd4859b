
clock()
local ttl = tonumber(ARGV[2])
local nc = #KEYS
if ARGV[3] ~= '' then
  nc = nc - 1
  -- Not expired yet (an expired one may already have been returned by an admission: not revived).
  local score = call('ZSCORE', KEYS[#KEYS], ARGV[3])
  if score and tonumber(score) > now then call('ZADD', KEYS[#KEYS], 'XX', format('%d', floor(now + ttl)), ARGV[3]) end
end
for i = 1, nc do
  call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cutoff_text(now))
  if call('ZADD', KEYS[i], 'XX', 'CH', format('%d', floor(now + ttl)), ARGV[1]) == 1 then extend_ttl(KEYS[i], 2 * ttl) end
end
return 1


if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('INCRBY', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
return 1

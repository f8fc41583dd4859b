
if ARGV[1] then
  if not call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
  for i = 5, #KEYS do call('SET', KEYS[i], '1', 'PX', ARGV[2]) end
  local included = {}
  for i = 3, #ARGV do included[ARGV[i]] = true end
  local late = call('HGETALL', KEYS[4])
  for i = 1, #late, 2 do
    if not included[late[i]] then call('INCRBY', KEYS[1], late[i + 1]) end
  end
  call('DEL', KEYS[4])
else
  call('DEL', KEYS[1])
end
move_to_gone(KEYS[2], KEYS[3], call('ZRANGE', KEYS[2], '0', '-1'))
return 1

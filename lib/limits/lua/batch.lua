
gcra_tat, gcra_dirty, numbers, win_state, win_dirty = {}, {}, {}, {}, {}
num = cached_number
local out = {}
local ki, ai = 0, 1
for it = 1, tonumber(ARGV[1]) do
  local typ, nk, na = ARGV[ai + 1], num(ARGV[ai + 2]), num(ARGV[ai + 3])
  ai = ai + 3
  if typ == 'a' then out[it] = admit_one(ki, ai) else out[it] = release_one(ki, ai, nk) end
  ki = ki + nk
  ai = ai + na
end
flush_gcra()
flush_windows()
return out

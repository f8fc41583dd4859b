
-- A reservation lease settled: live, delta is added; returned already (gone), only the cost;
-- neither, it was settled before (a replayed settlement).
local function settle_lease(bal, res_key, gone_key, lease, delta, reserved)
  local state = 1
  if reserved ~= '0' and call('ZREM', res_key, lease .. '|' .. reserved) == 0 then
    state = 0
    if call('ZREM', gone_key, lease .. '|' .. reserved) == 1 then state = 2 end
  end
  if state > 0 and call('EXISTS', bal) == 1 then
    call('INCRBY', bal, delta)
    if state == 2 then call('DECRBY', bal, reserved) end
  end
end

-- A token reservation (a tokens rule, check_tokens) settled to what was used: delta (used - reserved,
-- usually negative) added to the bucket it was counted in, kt, while that bucket is still in the
-- window (once it has left, the reservation counts no more either). Never below zero. In a batch,
-- a window an admission of the same call read is changed in its kept state (written at the end).
local function settle_tokens(key, kt, d)
  local st = win_state and win_state[key]
  local c
  if st and kt == st.kt then c = st.cur else c = tonumber(call('HGET', key, kt)) end
  if not c or c <= 0 then return end
  if c + d < 0 then d = -c end
  if d == 0 then return end
  if st then
    if kt == st.kt then st.cur = st.cur + d else call('HINCRBY', key, kt, format('%d', d)) end
    st.n = st.n + d
    if not st.dirty then
      st.dirty = true
      win_dirty[#win_dirty + 1] = key
    end
    return
  end
  call('HINCRBY', key, kt, format('%d', d))
  if call('HINCRBY', key, 'n', format('%d', d)) <= 0 then call('DEL', key) end
end

local function release_one(ko, ao, nk)
local KEYS, ARGV = KEYS, ARGV
local lease = ARGV[ao + 1]
local nc = num(ARGV[ao + 2])
local delta = ARGV[ao + 3]
local reserved = ARGV[ao + 4]
local nb = num(ARGV[ao + 5])
local once = ARGV[ao + 6]
for i = 1, nc do call('ZREM', KEYS[ko + i], lease) end
local k = nc
-- A charge settled once (ReleaseInput.chargeId): its marker, set with the settlement, makes any
-- later settlement of the same charge (a batch line run again after a takeover) charge nothing:
-- its reservation is returned whole.
local dup = false
if delta ~= '' and once ~= '' then
  local marker = KEYS[ko + k + (reserved == '' and 1 or 3) + 1]
  if not call('SET', marker, '1', 'NX', 'PX', once) then dup = true end
end
if delta ~= '' then
  local bal = KEYS[ko + k + 1]
  if reserved == '' then
    k = k + 1
    -- A missing balance is reloaded from the database, which already has the real cost.
    if not dup and call('EXISTS', bal) == 1 then call('INCRBY', bal, delta) end
  else
    if dup then delta = reserved end
    -- The reservation lease: live, settle it; returned already (gone), charge the cost only;
    -- neither, it was settled before (a replayed settlement).
    local member = lease .. '|' .. reserved
    local state = 1
    if reserved ~= '0' and call('ZREM', KEYS[ko + k + 2], member) == 0 then
      state = 0
      if call('ZREM', KEYS[ko + k + 3], member) == 1 then state = 2 end
    end
    k = k + 3
    if state > 0 and call('EXISTS', bal) == 1 then
      call('INCRBY', bal, delta)
      if state == 2 then call('DECRBY', bal, reserved) end
    end
  end
  if once ~= '' then k = k + 1 end
end
for j = 1, nb do
  local bres = ARGV[ao + 6 + 2 * j]
  settle_lease(KEYS[ko + k + 1], KEYS[ko + k + 2], KEYS[ko + k + 3], lease, dup and bres or ARGV[ao + 5 + 2 * j], bres)
  k = k + 3
end
local qa = ao + 2 + 2 * nb
-- Only the token quota's hour buckets need the clock.
local bucket = 0
if nk > k then bucket = format('%d', floor(clock() / HOUR)) end
for j = 1, nk - k do
  local key = KEYS[ko + k + j]
  local w = ARGV[qa + 3 + 2 * j]
  -- 't<bucket>': a token reservation's settlement (settle_tokens); else a quota's window.
  if w:byte(1) == 116 then
    settle_tokens(key, w:sub(2), num(ARGV[qa + 4 + 2 * j]))
  else
    call('HINCRBY', key, bucket, ARGV[qa + 4 + 2 * j])
    call('PEXPIRE', key, format('%d', ceil(num(w) + HOUR)))
  end
end
return 1
end

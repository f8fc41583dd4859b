
local CONCURRENCY_RETRY_CAP = 1000
-- Redis 7 lengthens a TTL in one call (PEXPIRE ... GT); older servers read it first (extend_ttl).
local HAS_PEXPIRE_GT = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
local lease, ttl

-- Exact comparison of signed decimal integers (balances may exceed 2^53 pico-USD). Both come
-- from INCRBY/DECRBY or our own canonical formatting: no leading zeros, '-' only before non-zero.
local function cmp_int(a, b)
  local an, bn = a:byte(1) == 45, b:byte(1) == 45
  if an ~= bn then
    if an then return -1 end
    return 1
  end
  local c = 0
  if #a ~= #b then
    if #a < #b then c = -1 else c = 1 end
  elseif a ~= b then
    if a < b then c = -1 else c = 1 end
  end
  if an then c = -c end
  return c
end

local function gcra_remaining(headroom, interval)
  local r = floor(headroom / interval + 1e-9)
  if r < 0 then return 0 end
  return r
end

-- Each check_* only prunes expired data (invisible to callers); apply_* does the real writes.

-- Members of a sorted set scored at or before cutoff have expired, and can only inflate ZCARD:
-- a count below exact_from decides nothing and is used as it is. From there on (and on about one
-- call in 16, to bound memory) the set is pruned first, so the count is exact wherever it decides.
local function live_count(key, cutoff, exact_from)
  local count = call('ZCARD', key)
  if count >= exact_from or usec % 16 == 0 then
    count = count - call('ZREMRANGEBYSCORE', key, '-inf', cutoff_text(cutoff))
  end
  return count
end

-- Window rules: fixed sub-buckets, O(1) state per key whatever the limit. The window (win ms) is cut
-- into buckets of g = floor(win / WINDOW_BUCKETS) ms (at least 1), nb = ceil(win / g) of them span
-- it. Any span of win ms touches at most nb + 1 consecutive buckets, so an admission in bucket k
-- counts buckets k - nb .. k: nothing admitted in any span of win ms ever exceeds the limit, and an
-- admission may be refused at most one bucket (1/60 of the window) early. The key is a hash:
-- bucket index -> count, 'n' the sum of the live buckets, 'lo' the lowest live bucket; a bucket
-- leaves at (b + nb + 1) * g, which is what Retry-After and the reset report. ~1 KB per key at most.
local WINDOW_BUCKETS = {{WINDOW_BUCKETS}}
local function window_shape(win)
  local g = floor(win / WINDOW_BUCKETS)
  if g < 1 then g = 1 end
  return g, ceil(win / g)
end

local function bucket_names(from, to)
  local names = {}
  for b = from, to do names[b - from + 1] = format('%d', b) end
  return names
end

-- Drops the buckets below first (their count leaves n); lo moves to the lowest bucket still
-- holding admissions. Runs once per bucket boundary per key at most: amortised O(1).
-- Returns n, lo and the counts it read (bucket -> count, first .. hi) for window_retry.
local function prune_window(key, n, lo, first, k, nb)
  -- Every stored bucket lies in lo .. lo + nb (an admission in bucket j pruned below j - nb).
  local hi = min(k, lo + nb)
  if hi < first then
    call('DEL', key)
    return 0, nil, nil
  end
  local names = bucket_names(lo, hi)
  local v = call('HMGET', key, unpack(names))
  local dropped, newlo, counts = 0, nil, {}
  for j = 1, #names do
    local b = lo + j - 1
    local c = tonumber(v[j]) or 0
    if b < first then
      dropped = dropped + c
    else
      counts[b] = c
      if c > 0 and not newlo then newlo = b end
    end
  end
  n = n - dropped
  if n <= 0 or not newlo then
    call('DEL', key)
    return 0, nil, nil
  end
  call('HDEL', key, unpack(names, 1, first - lo))
  call('HSET', key, 'n', format('%d', n), 'lo', format('%d', newlo))
  return n, newlo, counts
end

-- A refusal's wait: until enough of the oldest buckets have left for one more admission. cur: the
-- current bucket's count as this call knows it (in a batch, not written to Redis yet).
local function window_retry(key, n, lo, k, g, nb, limit, counts, cur)
  if not counts then
    counts = {}
    if lo <= k then
      local v = call('HMGET', key, unpack(bucket_names(lo, k)))
      for j = 1, #v do counts[lo + j - 1] = tonumber(v[j]) or 0 end
    end
    counts[k] = cur
  end
  local left = n
  for b = lo, k do
    left = left - (counts[b] or 0)
    if left < limit then return max(1, ceil((b + nb + 1) * g - now)) end
  end
  return max(1, ceil((k + nb + 1) * g - now))
end

-- In a batch (BATCH_LUA makes the table), a window's state is read from Redis by the first item that
-- uses the key and kept here; later items of the call (an account sending in parallel) read and
-- update it, and it is written back once when the call ends (flush_windows). The call shares one
-- clock reading, so every item is in the same bucket. A single admission reads and writes at once.
-- (win_state and win_dirty are declared in the prelude: a token settlement in the same batch reads them.)

-- The check made on the first read of a key is also the key's state (n, lo, cur ...: one table per
-- check, as the other rules); in a batch it is kept in win_state and later checks of the key point
-- to it (st).
-- amt: what the admission counts (1; a tokens rule's reservation, check_tokens). It is admitted while
-- n + amt <= limit, and its wait is until the count has fallen to limit - amt.
local function check_window(key, limit, win, kind, _, tok)
  -- Plain windows leave amt out of their check's table (nil: 1): a field more is a cost per check.
  local amt = tok or 1
  local st = win_state and win_state[key]
  if st then
    local reset = 0
    if st.lo then reset = ceil0((st.lo + st.nb + 1) * st.g - now) end
    local c = { ok = st.n + amt <= limit, retry = 0, rem = max(0, limit - st.n), reset = reset, count = st.n, st = st,
                kind = kind, limit = limit, win = win, amt = tok }
    if not c.ok then c.retry = window_retry(key, st.n, st.lo, st.k, st.g, st.nb, limit - amt + 1, nil, st.cur) end
    return c
  end
  local g, nb = window_shape(win)
  local k = floor(now / g)
  local kt = format('%d', k)
  -- The current bucket's count too: the admission then writes both counts with one HSET.
  local v = call('HMGET', key, 'n', 'lo', kt)
  local n, lo, counts = tonumber(v[1]) or 0, tonumber(v[2]), nil
  if n == 0 then
    lo = nil
  elseif lo < k - nb then
    n, lo, counts = prune_window(key, n, lo, k - nb, k, nb)
  end
  local cur = tonumber(v[3]) or 0
  local reset = 0
  if lo then reset = ceil0((lo + nb + 1) * g - now) end
  local c = { ok = n + amt <= limit, retry = 0, rem = max(0, limit - n), reset = reset, count = n, kind = kind,
              limit = limit, win = win, n = n, lo = lo, cur = cur, cur0 = cur, n0 = n, k = k, kt = kt,
              g = g, nb = nb, dirty = false, amt = tok }
  if win_state then win_state[key] = c end
  if not c.ok then
    -- A reservation larger than the limit never fits: the longest wait (the caller says why).
    if amt > limit then c.retry = ceil((k + nb + 1) * g - now)
    else c.retry = window_retry(key, n, lo, k, g, nb, limit - amt + 1, counts, cur) end
  end
  return c
end

-- Writes a window's state: both counts (and 'lo' for a new key) with one HSET; the TTL when a
-- bucket is made (the key lives until its newest bucket leaves the window).
local function write_window(key, st)
  if st.n0 == 0 then
    call('HSET', key, st.kt, format('%d', st.cur), 'n', format('%d', st.n), 'lo', format('%d', st.lo))
  else
    call('HSET', key, st.kt, format('%d', st.cur), 'n', format('%d', st.n))
  end
  if st.cur0 == 0 then call('PEXPIRE', key, format('%d', max(1, ceil((st.k + st.nb + 1) * st.g - now)))) end
end

local function flush_windows()
  for j = 1, #win_dirty do write_window(win_dirty[j], win_state[win_dirty[j]]) end
end

local function apply_window(key, i, limit, win, c)
  local st = c.st or c
  local amt = c.amt or 1
  st.n = st.n + amt
  st.cur = st.cur + amt
  if not st.lo then st.lo = st.k end
  if not win_state then
    write_window(key, st)
  elseif not st.dirty then
    st.dirty = true
    win_dirty[#win_dirty + 1] = key
  end
  return limit - c.count - amt, ceil0((st.lo + st.nb + 1) * st.g - now)
end

-- Tokens per window (TPM): a window whose admission counts the request's token reservation (the
-- admission's one amount, ARGV[tok_at]: estimated input + the largest output) instead of 1. The
-- release settles it to what was used, in the bucket it was counted in (settle_tokens).
local tok_at
local function check_tokens(key, limit, win, kind)
  return check_window(key, limit, win, kind, nil, num(ARGV[tok_at]))
end

-- In a batch (BATCH_LUA makes the tables), GCRA states are kept here and written back once when the
-- call ends (flush_gcra): the items that share a key (the global layer always, an account's own
-- layers when it sends in parallel) then cost one SET for all of them instead of one each, the SET
-- being the dearest call of an admission (docs/decisions/005-admission-script-cost.md). Later items read the state from here,
-- so each item still sees every earlier one, as if run on its own. A single admission writes at
-- once (the tables would cost it more than they save).
local gcra_tat, gcra_dirty

-- A GCRA state: its theoretical arrival time, kept until then.
local function write_gcra(key, tat)
  call('SET', key, format('%.4f', tat), 'PX', format('%d', max(1, ceil(tat - now))))
end

local function flush_gcra()
  for j = 1, #gcra_dirty do write_gcra(gcra_dirty[j], gcra_tat[gcra_dirty[j]]) end
end

-- stored: the key's value, read with the admission's other plain values (one MGET), or set by an
-- earlier item of this call.
local function check_gcra(key, limit, win, kind, stored)
  local interval = win / limit
  local tat = now
  if stored then tat = max(tonumber(stored), now) end
  local new_tat = tat + interval
  local allow_at = new_tat - win
  -- reset: time until the full burst is available again (until refused: until conforming).
  local c = { ok = now >= allow_at, retry = 0, rem = gcra_remaining(win - (tat - now), interval),
              reset = ceil0(tat - now), new_tat = new_tat, interval = interval, kind = kind, limit = limit, win = win }
  if not c.ok then
    c.retry = max(1, ceil(allow_at - now))
    c.reset = c.retry
  end
  return c
end

local function apply_gcra(key, i, limit, win, c)
  if gcra_tat then
    if not gcra_tat[key] then gcra_dirty[#gcra_dirty + 1] = key end
    gcra_tat[key] = c.new_tat
  else
    write_gcra(key, c.new_tat)
  end
  return gcra_remaining(win - (c.new_tat - now), c.interval), ceil(c.new_tat - now)
end

-- Expired leases (an instance that died without releasing): exact from the last two slots on, where
-- the count and the earliest expiry matter.
local function check_concurrency(key, limit, win, kind)
  local count = live_count(key, now, limit - 1)
  -- The earliest expiry matters only when this admission is refused or takes the last slot.
  local earliest = nil
  if count + 1 >= limit then earliest = lowest_score(key) end
  local until_earliest = 0
  if earliest then until_earliest = max(1, ceil(earliest - now)) end
  local c = { ok = count < limit, retry = 0, rem = max(0, limit - count), reset = 0,
              count = count, earliest = earliest, kind = kind, limit = limit, win = win }
  if not c.ok then
    c.retry = min(until_earliest, CONCURRENCY_RETRY_CAP)
    c.reset = until_earliest
  end
  return c
end

local function apply_concurrency(key, i, limit, win, c)
  -- Whole milliseconds, rounded down: a lease never outlives its TTL, nor a Retry-After the TTL.
  local expiry = floor(now + ttl)
  call('ZADD', key, format('%d', expiry), lease)
  -- Counted empty: the set did not exist (or its last lease was just pruned, which removes it), so
  -- ZADD made a new key without a TTL. Otherwise only ever lengthen its TTL.
  if c.count == 0 then
    call('PEXPIRE', key, format('%d', ceil(2 * ttl)))
  elseif HAS_PEXPIRE_GT then
    call('PEXPIRE', key, format('%d', ceil(2 * ttl)), 'GT')
  else
    extend_ttl(key, 2 * ttl)
  end
  local remaining = limit - c.count - 1
  if remaining > 0 then return remaining, 0 end
  local next_expiry = min(c.earliest or expiry, expiry)
  return remaining, ceil(next_expiry - now)
end

local function check_quota(key, limit, win, kind)
  local span = max(1, ceil(win / HOUR))
  local first = floor(now / HOUR) - span + 1
  local fields = call('HGETALL', key)
  local usage = 0
  local oldest = nil
  for j = 1, #fields, 2 do
    local bucket = tonumber(fields[j])
    local used = tonumber(fields[j + 1])
    if bucket < first then
      call('HDEL', key, fields[j])
    else
      usage = usage + used
      if used > 0 and (not oldest or bucket < oldest) then oldest = bucket end
    end
  end
  local until_oldest = 0
  if oldest then until_oldest = max(1, ceil((oldest + span) * HOUR - now)) end
  local c = { ok = usage < limit, retry = 0, rem = max(0, limit - usage), reset = until_oldest,
              kind = kind, limit = limit, win = win }
  if not c.ok then c.retry = until_oldest end
  return c
end

-- Usage is added by release(), so admission changes nothing here.
local function apply_quota(key, i, limit, win, c)
  return c.rem, c.reset
end

local checkers = { window = check_window, rwindow = check_window, gcra = check_gcra,
                   quota = check_quota, concurrency = check_concurrency, tokens = check_tokens }
local appliers = { window = apply_window, rwindow = apply_window, gcra = apply_gcra,
                   quota = apply_quota, concurrency = apply_concurrency, tokens = apply_window }

-- Scratch tables that admit_one fills afresh for every item (only the entries it set are read):
-- made once per call instead of once per item, and a table that grows reallocates each time.
local mkeys, gcra_at, checks, res = {}, {}, {}, {}

local function admit_one(ko, ao)
local KEYS, ARGV = KEYS, ARGV
clock()
lease = ARGV[ao + 1]
ttl = num(ARGV[ao + 2])
local n = num(ARGV[ao + 3])
local reserve = ARGV[ao + 4]

-- One MGET reads every plain value below: the deny markers, the GCRA states, the balance, the budgets.
local nb_at = ao + 6 + 3 * n
local nb = num(ARGV[nb_at])
-- The token reservation follows the budgets' thresholds (only sent with a tokens rule).
tok_at = nb_at + nb + 1
local first_deny = n
if reserve ~= '' then first_deny = n + 3 + 3 * nb end
local nd = num(ARGV[ao + 5])
local m = nd
for j = 1, nd do mkeys[j] = KEYS[ko + first_deny + j] end
for i = 1, n do
  gcra_at[i] = false
  if ARGV[ao + 3 + 3 * i] == 'gcra' and not (gcra_tat and gcra_tat[KEYS[ko + i]]) then
    m = m + 1
    mkeys[m] = KEYS[ko + i]
    gcra_at[i] = m
  end
end
local balance_at = 0
if reserve ~= '' then
  m = m + 1
  mkeys[m] = KEYS[ko + n + 1]
  balance_at = m
  for j = 1, nb do
    m = m + 1
    mkeys[m] = KEYS[ko + n + 1 + 3 * j]
  end
end
local values = {}
if m > 0 then values = call('MGET', unpack(mkeys, 1, m)) end

-- Phase 0: a deny marker (suspended account, revoked key) refuses before anything is counted.
for j = 1, nd do
  if values[j] then return { 4, j - 1, 0, '' } end
end

-- Phase 1: check every rule; remember the refusal with the longest wait (the binding one).
local worst = 0
for i = 1, n do
  local base = 5 + (i - 1) * 3
  local kind = ARGV[ao + base + 1]
  local checker = checkers[kind]
  if not checker then return redis.error_reply('unknown limit rule kind ' .. tostring(kind)) end
  -- Every check's table is made whole by its constructor (fields added later would grow it again).
  local c = checker(KEYS[ko + i], num(ARGV[ao + base + 2]), num(ARGV[ao + base + 3]), kind,
                    (gcra_tat and gcra_tat[KEYS[ko + i]]) or (gcra_at[i] and values[gcra_at[i]]))
  checks[i] = c
  if not c.ok and (worst == 0 or c.retry > checks[worst].retry) then worst = i end
end

if worst > 0 then
  for i = 1, n do
    res[2 * i - 1] = checks[i].rem
    res[2 * i] = checks[i].reset
  end
  return { 0, worst - 1, checks[worst].retry, '', unpack(res, 1, 2 * n) }
end

-- Phase 2: the balance reservation.
local balance_key = KEYS[ko + n + 1]
local balance = ''
if reserve ~= '' then
  balance = values[balance_at]
  if not balance then return { 3, 0, 0, '' } end
  -- Reservations of requests whose instance died (expired leases) go back to the balance first.
  local expired = call('ZRANGEBYSCORE', KEYS[ko + n + 2], '-inf', cutoff_text(now), 'LIMIT', '0', '64')
  if expired[1] then balance = reap(balance_key, KEYS[ko + n + 2], KEYS[ko + n + 3], expired) end
  for j = 1, nb do
    if not values[balance_at + j] then return { 3, j, 0, '' } end
  end
  if cmp_int(balance, reserve) < 0 then return { 2, 0, 0, balance } end
  -- The budgets: counters of minus the spend, reserved and settled as the balance is.
  for j = 1, nb do
    local bk = ko + n + 1 + 3 * j
    local counter = values[balance_at + j]
    local gone = call('ZRANGEBYSCORE', KEYS[bk + 1], '-inf', cutoff_text(now), 'LIMIT', '0', '64')
    if gone[1] then counter = reap(KEYS[bk], KEYS[bk + 1], KEYS[bk + 2], gone) end
    if cmp_int(counter, ARGV[nb_at + j]) < 0 then return { 2, j, 0, counter } end
  end
end

-- Phase 3: everything passed; apply all mutations. The balance before the reservation goes back
-- with the reply (the caller subtracts its reservation: exact, without number conversions here).
for i = 1, n do
  local c = checks[i]
  res[2 * i - 1], res[2 * i] = appliers[c.kind](KEYS[ko + i], i, c.limit, c.win, c, ARGV[ao + 5 + 3 * i])
end
if reserve ~= '' then
  call('DECRBY', balance_key, reserve)
  if reserve ~= '0' then call('ZADD', KEYS[ko + n + 2], format('%d', floor(now + ttl)), lease .. '|' .. reserve) end
  for j = 1, nb do
    local bk = ko + n + 1 + 3 * j
    call('DECRBY', KEYS[bk], reserve)
    if reserve ~= '0' then call('ZADD', KEYS[bk + 1], format('%d', floor(now + ttl)), lease .. '|' .. reserve) end
  end
end
-- The server's clock reading goes last (as TIME gave it: no conversion): on Redis Cluster an
-- admission split over slots may have to be undone, and the undo finds the window buckets by it.
res[2 * n + 1], res[2 * n + 2] = t[1], t[2]
return { 1, 0, 0, balance, unpack(res, 1, 2 * n + 2) }
end

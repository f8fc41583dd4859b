// Redis-backed limiter shared by every gateway instance.
// Each operation is ONE Lua script (one round trip, atomic on the server). admit() first
// checks every rule without changing anything that matters, then the balance, and only
// when everything passes applies all mutations. Time comes from the Redis server
// (TIME) so instances with skewed clocks still agree on windows and leases.

import { createHash } from 'node:crypto';
import { Cluster, Command, Redis } from 'ioredis';
import { hashTag } from './keys';
import type { AdmitInput, AdmitResult, Limiter, ReleaseInput, Rule, RuleState } from './types';

/** A single Redis or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/** Sub-buckets per window rule (as the in-process limiter's; see check_window). */
const WINDOW_BUCKETS = 60;

// Shared Lua prelude: server time in fractional milliseconds and small helpers.
// An admission's time in Redis is mostly the Lua around its commands (`npm run bench:redis-script`
// counts it under callgrind; bench/NOTES.md has the figures): every object a script makes, every
// table that grows, every number converted to or from text (Redis 7.0 formats Lua numbers with
// printf, scores and tonumber go through strtod) and every SET (its reply becomes a Lua table) cost
// more than most calls. So the scripts read every plain value with one MGET, write GCRA states once
// per batch, hand redis.call integer text, keep sorted-set scores whole and read the clock only when
// an operation needs it.
const LUA_PRELUDE = `
-- Globals read into locals once per call: a global is a table lookup on every use (callgrind: ~2 %
-- of an admission's work in Redis for the handful of KEYS/ARGV lookups alone).
local call, tonumber, unpack = redis.call, tonumber, unpack
local floor, ceil, max, min, format = math.floor, math.ceil, math.max, math.min, string.format
local HOUR = 3600000
-- Server time, read once per script call (a batch shares one reading) and only when needed.
-- Sorted-set scores are whole milliseconds, written as text: a fractional score costs Redis 7.0 a
-- slow double-to-text conversion for every call and reply that carries it and another back
-- (callgrind: ~18 % of an admission with three sliding windows). now_up: now rounded up, the
-- score of a window entry made now (so it never expires before its exact time).
local t, now, usec, now_up, now_up_text
local function clock()
  if not now then
    t = call('TIME')
    usec = tonumber(t[2])
    now = tonumber(t[1]) * 1000 + usec / 1000
    now_up = ceil(now)
    now_up_text = format('%d', now_up)
  end
  return now
end

-- A cutoff for ZREMRANGEBYSCORE: with whole-millisecond scores, "at or before x" is "at or before floor(x)".
local function cutoff_text(x)
  return format('%d', floor(x))
end

-- The numbers of ARGV. In a batch each distinct text is converted once (cached_number): its items
-- repeat the same counts, limits, windows and TTLs, and every tonumber of a string is a strtod
-- (~4 % of a batch's work). A single admission or release converts each once anyway (tonumber).
-- The batch-only tables are made by BATCH_LUA: every object a script makes costs each call.
local numbers
local function cached_number(s)
  local v = numbers[s]
  if not v then
    v = tonumber(s)
    numbers[s] = v
  end
  return v
end
local num = tonumber

local function ceil0(x)
  if x < 0 then return 0 end
  return ceil(x)
end

local function lowest_score(key)
  local r = call('ZRANGE', key, '0', '0', 'WITHSCORES')
  if r[2] then return tonumber(r[2]) end
  return nil
end

-- Only ever lengthen a key's TTL: other members may need it to live longer.
local function extend_ttl(key, ms)
  ms = ceil(ms)
  if call('PTTL', key) < ms then call('PEXPIRE', key, format('%d', ms)) end
end

-- Balance reservations are leases: a sorted set per balance (its key + ':res') of members
-- 'leaseId|amount' scored by expiry, removed by the settlement. A reservation that was returned to
-- the balance without being settled (expired: its instance died; or the balance was reloaded from the
-- database, which never saw it) moves to the balance's ':gone' set, so that its late settlement
-- charges only the cost. Gone entries are kept for a day.
local GONE_MS = '86400000'
local function move_to_gone(res_key, gone_key, members)
  for j = 1, #members do
    call('ZREM', res_key, members[j])
    call('ZADD', gone_key, format('%d', floor(now or clock())), members[j])
  end
  if #members > 0 then call('PEXPIRE', gone_key, GONE_MS) end
end

-- Returns the expired reservations of a balance to it; the balance's text after.
local function reap(balance_key, res_key, gone_key, expired)
  for j = 1, #expired do
    local amount = expired[j]:match('|(%-?%d+)$')
    if amount then call('INCRBY', balance_key, amount) end
  end
  move_to_gone(res_key, gone_key, expired)
  return call('GET', balance_key)
end
`;

// KEYS[1..n]: rule keys; KEYS[n+1..n+3]: balance, reservation and gone keys when a reservation is
// requested, then the same three for each budget (AdmitInput.budgets); then the deny keys.
// ARGV: leaseId, leaseTtlMs, n, reserve amount ('' for none), deny key count, then per rule: kind,
// limit, windowMs; then the budget count and per budget its threshold (amount - cap: the counter,
// minus the spend, must stay at or above it).
// Reply: {status, refusedIndex, retryAfterMs, balance, remaining1, reset1, ...}; balance: on status 2
// the balance available, on status 1 the balance before this reservation ('' without one).
//   status 1 = admitted, 0 = refused by a rule, 2 = insufficient balance, 3 = balance not loaded,
//   4 = a deny key exists (refusedIndex: which one).
// ADMIT_CORE defines admit_one(ko, ao): the item's KEYS and ARGV start after those offsets (a batch
// reads its items in place rather than copying them into tables of their own, ~10 % of a pair's
// work in Redis); the helpers read the current item's lease and ttl.
const ADMIT_CORE = `
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
local WINDOW_BUCKETS = ${WINDOW_BUCKETS}
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
local win_state

-- The check made on the first read of a key is also the key's state (n, lo, cur ...: one table per
-- check, as the other rules); in a batch it is kept in win_state and later checks of the key point
-- to it (st).
local function check_window(key, limit, win, kind)
  local st = win_state and win_state[key]
  if st then
    local reset = 0
    if st.lo then reset = ceil0((st.lo + st.nb + 1) * st.g - now) end
    local c = { ok = st.n < limit, retry = 0, rem = max(0, limit - st.n), reset = reset, count = st.n, st = st,
                kind = kind, limit = limit, win = win }
    if not c.ok then c.retry = window_retry(key, st.n, st.lo, st.k, st.g, st.nb, limit, nil, st.cur) end
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
  local c = { ok = n < limit, retry = 0, rem = max(0, limit - n), reset = reset, count = n, kind = kind,
              limit = limit, win = win, n = n, lo = lo, cur = cur, cur0 = cur, n0 = n, k = k, kt = kt,
              g = g, nb = nb, dirty = false }
  if win_state then win_state[key] = c end
  if not c.ok then c.retry = window_retry(key, n, lo, k, g, nb, limit, counts, cur) end
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

local win_dirty
local function flush_windows()
  for j = 1, #win_dirty do write_window(win_dirty[j], win_state[win_dirty[j]]) end
end

local function apply_window(key, i, limit, win, c)
  local st = c.st or c
  st.n = st.n + 1
  st.cur = st.cur + 1
  if not st.lo then st.lo = st.k end
  if not win_state then
    write_window(key, st)
  elseif not st.dirty then
    st.dirty = true
    win_dirty[#win_dirty + 1] = key
  end
  return limit - c.count - 1, ceil0((st.lo + st.nb + 1) * st.g - now)
end

-- In a batch (BATCH_LUA makes the tables), GCRA states are kept here and written back once when the
-- call ends (flush_gcra): the items that share a key (the global layer always, an account's own
-- layers when it sends in parallel) then cost one SET for all of them instead of one each, the SET
-- being the dearest call of an admission (bench/NOTES.md). Later items read the state from here,
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
                   quota = check_quota, concurrency = check_concurrency }
local appliers = { window = apply_window, rwindow = apply_window, gcra = apply_gcra,
                   quota = apply_quota, concurrency = apply_concurrency }

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
`;
const ADMIT_LUA = `${LUA_PRELUDE}${ADMIT_CORE}
return admit_one(0, 0)
`;

// KEYS: concurrency keys (ARGV[2] of them), the settle key when ARGV[3] ~= '' (with its reservation
// and gone keys when ARGV[4] ~= ''), then each budget's counter, reservation and gone keys, then
// quota keys.
// ARGV: leaseId, concurrency key count, settle delta ('' for none), reserved ('' for a plain
// settlement), budget count, per budget its delta and reserved, then windowMs, amount per quota key.
// release_one(ko, ao, nk): the item's KEYS and ARGV start after the offsets; nk: its key count.
const RELEASE_CORE = `
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

local function release_one(ko, ao, nk)
local KEYS, ARGV = KEYS, ARGV
local lease = ARGV[ao + 1]
local nc = num(ARGV[ao + 2])
local delta = ARGV[ao + 3]
local reserved = ARGV[ao + 4]
for i = 1, nc do call('ZREM', KEYS[ko + i], lease) end
local k = nc
if delta ~= '' then
  local bal = KEYS[ko + k + 1]
  if reserved == '' then
    k = k + 1
    -- A missing balance is reloaded from the database, which already has the real cost.
    if call('EXISTS', bal) == 1 then call('INCRBY', bal, delta) end
  else
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
end
local nb = num(ARGV[ao + 5])
for j = 1, nb do
  settle_lease(KEYS[ko + k + 1], KEYS[ko + k + 2], KEYS[ko + k + 3], lease, ARGV[ao + 4 + 2 * j], ARGV[ao + 5 + 2 * j])
  k = k + 3
end
local qa = ao + 1 + 2 * nb
-- Only the token quota's hour buckets need the clock.
local bucket = 0
if nk > k then bucket = format('%d', floor(clock() / HOUR)) end
for j = 1, nk - k do
  local key = KEYS[ko + k + j]
  call('HINCRBY', key, bucket, ARGV[qa + 4 + 2 * j])
  call('PEXPIRE', key, format('%d', ceil(num(ARGV[qa + 3 + 2 * j]) + HOUR)))
end
return 1
end
`;
const RELEASE_LUA = `${LUA_PRELUDE}${RELEASE_CORE}
return release_one(0, 0, #KEYS)
`;

// Several admits and releases issued in the same event-loop turn, in one script call, in order
// (each one atomic as on its own; they share the call's clock reading).
// ARGV[1]: item count; then per item: type ('a' admit, 'r' release), key count, arg count, args.
// KEYS: every item's keys, in item order. Reply: one entry per item, as the single scripts reply.
const BATCH_LUA = `${LUA_PRELUDE}${ADMIT_CORE}${RELEASE_CORE}
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
`;

// KEYS: concurrency keys, then the reservation key when ARGV[3] ~= ''. ARGV: leaseId, leaseTtlMs,
// reservation member ('leaseId|amount', or ''). Only still-live leases are extended.
const RENEW_LUA = `${LUA_PRELUDE}
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
`;

// KEYS: balance, reservation and gone keys. Forgets the balance (it is reloaded from the database,
// which has none of the open reservations): its open reservations are gone, so their settlements
// charge only their cost. With ARGV[1] (an amount): loads the balance instead, if not loaded (SET NX),
// and marks the pending credits it includes applied (KEYS[4..]: their markers; ARGV[2]: their lifetime).
const RELOAD_LUA = `${LUA_PRELUDE}
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
`;

// KEYS: the credit's applied marker, the balance key, the balance's late credits. ARGV: delta,
// marker lifetime (ms), entry id, late lifetime (ms). Applies a credit ledger entry once: the first
// call sets the marker and adds to the balance if it is loaded. An unloaded balance will load from
// the database, but a load already under way may have read it before this credit committed: the
// credit is kept in the late hash, and the load adds it unless its read included it (RELOAD_LUA).
// The marker is set last: Redis does not undo a script's writes when a later command fails, so a
// failing INCRBY (an overflow) must leave the credit unmarked, to be tried again.
const CREDIT_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('INCRBY', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
return 1
`;

// KEYS[1]: balance key. ARGV[1]: delta. No-op when the balance is not loaded.
const ADJUST_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
`;

// Undoes the window and GCRA counts of an admission (Redis Cluster: one part of an admission split
// over slots was refused, so the parts that admitted are taken back; leases and reservations go by
// release). KEYS: the rule keys. ARGV: the admission's TIME (seconds, microseconds), then per key
// kind ('window' or 'gcra'), limit, windowMs.
const UNDO_LUA = `
local call, floor, ceil, max, format = redis.call, math.floor, math.ceil, math.max, string.format
local at = tonumber(ARGV[1]) * 1000 + tonumber(ARGV[2]) / 1000
for i = 1, #KEYS do
  local kind, limit, win = ARGV[3 * i], tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2])
  if kind == 'window' then
    local g = floor(win / ${WINDOW_BUCKETS})
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
`;

type Arg = string | number;

/** RESP bulk strings; with `utf8` false, lengths in UTF-16 units (exact for ASCII text only). */
function bulkStrings(args: readonly Arg[], utf8: boolean): string {
  let out = '';
  for (const a of args) {
    const s = typeof a === 'string' ? a : String(a);
    out += `$${utf8 ? Buffer.byteLength(s) : s.length}\r\n${s}\r\n`;
  }
  return out;
}

/**
 * One command in the Redis protocol, its arguments given as segments (a rule list's keys, an item's
 * arguments) so that nothing is copied into one long array first. Lengths are counted as for ASCII
 * and the whole command checked once (its UTF-8 length equals its length exactly when it is all
 * ASCII); otherwise it is framed again with each argument's UTF-8 length.
 */
export function encodeCommand(name: string, segments: readonly (readonly Arg[])[]): string {
  let n = 1;
  for (const seg of segments) n += seg.length;
  const encode = (utf8: boolean) => {
    let out = `*${n}\r\n$${name.length}\r\n${name}\r\n`;
    for (const seg of segments) out += bulkStrings(seg, utf8);
    return out;
  };
  const wire = encode(false);
  return Buffer.byteLength(wire) === wire.length ? wire : encode(true);
}

/**
 * A command encoded once by encodeCommand and written as it is. ioredis's generic Command copies its
 * arguments (Array#flat) and frames each one again when written: for a batch of ten admissions
 * (~370 arguments) ~50 µs of JavaScript against ~15 µs here. (ioredis's own script commands
 * override toWritable the same way.)
 */
class EncodedCommand extends Command {
  private readonly wire: string;
  private readonly routeKey: string | undefined;

  /** routeKey: a key of the command, by whose slot a Cluster client sends it (its arguments are not parsed). */
  constructor(name: string, segments: readonly (readonly Arg[])[], routeKey?: string) {
    super(name, [], { replyEncoding: 'utf8' });
    this.wire = encodeCommand(name, segments);
    this.routeKey = routeKey;
  }

  override getKeys(): Array<string | Buffer> {
    return this.routeKey === undefined ? [] : [this.routeKey];
  }

  override toWritable(): string {
    return this.wire;
  }

  /**
   * The client's commandTimeout, tolerant of a busy event loop. Timers run before the loop reads its
   * sockets, so after a long synchronous stretch (a burst of requests on a slow machine) ioredis
   * declares a command timed out whose reply has already arrived: the failover limiter then falls
   * back to in-process for a Redis that answered in time, and the admission Redis did make (a lease,
   * a reservation) is never released there. When the timer fires, one turn of the loop reads what
   * has arrived before the verdict. (The timer is ioredis's own field, which it clears on settling.)
   */
  override setTimeout(ms: number): void {
    const timers = this as unknown as { _commandTimeoutTimer?: NodeJS.Timeout };
    if (timers._commandTimeoutTimer) return;
    timers._commandTimeoutTimer = setTimeout(() => {
      setImmediate(() => {
        if (!this.isResolved) this.reject(new Error('Command timed out'));
      });
    }, ms);
  }
}

/** Sends one command encoded by the limiter (EncodedCommand): every limiter command goes this way. */
function sendEncoded(redis: RedisClient, name: string, segments: readonly (readonly Arg[])[], routeKey?: string): Promise<unknown> {
  const command = new EncodedCommand(name, segments, routeKey);
  redis.sendCommand(command);
  return command.promise;
}

/** A Lua script run by EVALSHA, falling back to EVAL once when the server lacks it. */
class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  run(redis: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    return this.runSegments(redis, keys.length, [keys, args], keys[0]);
  }

  /** Runs with the keys, then the arguments, given as segments (`numKeys` of them keys, all in routeKey's slot). */
  runSegments(redis: RedisClient, numKeys: number, segments: readonly (readonly Arg[])[], routeKey?: string): Promise<unknown> {
    return sendEncoded(redis, 'evalsha', [[this.sha, numKeys], ...segments], routeKey).catch((err: unknown) => {
      if (!isNoScriptError(err)) throw err;
      return sendEncoded(redis, 'eval', [[this.source, numKeys], ...segments], routeKey);
    });
  }
}

const admitScript = new LuaScript(ADMIT_LUA);
const releaseScript = new LuaScript(RELEASE_LUA);
const renewScript = new LuaScript(RENEW_LUA);
const adjustScript = new LuaScript(ADJUST_LUA);
const reloadScript = new LuaScript(RELOAD_LUA);
const creditScript = new LuaScript(CREDIT_LUA);
const undoScript = new LuaScript(UNDO_LUA);

/** The sorted set of a balance's reservation leases ('leaseId|amount' scored by expiry). */
export const reservationsKey = (balanceKey: string) => `${balanceKey}:res`;
/** Reservations returned to the balance unsettled (expired, or the balance reloaded): 'leaseId|amount'. */
export const goneReservationsKey = (balanceKey: string) => `${balanceKey}:gone`;
/** Credits applied while the balance was not loaded, for the load under way (CREDIT_LUA). */
export const lateCreditsKey = (balanceKey: string) => `${balanceKey}:late`;
/** How long a late credit waits for a load: far longer than one load takes. */
export const LATE_CREDIT_MS = 10 * 60_000;
/** Marks a credit ledger entry as applied to the live balance. */
// Under the balance's key: ledger ids are a database sequence, so a database restored or replaced
// (a test run's) reuses them, and a marker by id alone would make a new credit look applied.
export const creditMarkerKey = (balanceKey: string, entryId: string) => `${balanceKey}:applied:${entryId}`;
/** How long an applied marker is kept: far longer than any credit can stay pending in the database. */
const CREDIT_MARKER_MS = 30 * 86_400_000;
const batchScript = new LuaScript(BATCH_LUA);

/** Most admits and releases one batch call carries (bounds the script's run time in Redis). */
const MAX_BATCH_ITEMS = 100;

interface Queued {
  type: 'a' | 'r';
  keys: string[];
  args: (string | number)[];
  resolve: (reply: unknown) => void;
  reject: (err: unknown) => void;
}

/** One slot's part of an admission on Redis Cluster: the input's rules, reservation and deny keys there. */
interface AdmitPart {
  input: AdmitInput;
  /** Positions of its rules and deny keys in the whole admission's. */
  ruleIndex: number[];
  denyIndex: number[];
}

export class RedisLimiter implements Limiter {
  readonly client: RedisClient;
  /**
   * A Redis Cluster: every call is split by hash tag so that each script call touches one slot
   * (an account's keys share its tag, lib/limits/keys.ts); the parts of one admission go in
   * parallel and those that admitted are undone when another refuses.
   */
  readonly cluster: boolean;
  /** Only a client we created ourselves is closed by close(). */
  private readonly ownsClient: boolean;

  /**
   * @param client an ioredis client (or Cluster), or a URL to create one from.
   * @param options.ownsClient close the client in close(); defaults to true only for a URL.
   */
  constructor(client: RedisClient | string, options: { ownsClient?: boolean } = {}) {
    this.ownsClient = options.ownsClient ?? typeof client === 'string';
    this.client = typeof client === 'string' ? new Redis(client) : client;
    this.cluster = this.client instanceof Cluster;
    // Commands are encoded here (EncodedCommand), so ioredis's key prefixing would not apply.
    const prefix = this.client instanceof Cluster ? this.client.options.keyPrefix ?? this.client.options.redisOptions?.keyPrefix : this.client.options.keyPrefix;
    if (prefix) throw new Error('RedisLimiter does not support a client with keyPrefix');
  }

  /** Calls queued for the end of this event-loop turn, by hash tag (one batch per slot; one group on a single Redis). */
  private queues = new Map<string, Queued[]>();
  private flushScheduled = false;

  /**
   * Admits and releases issued in the same event-loop turn (the admissions of requests read
   * together, the releases of replies just sent) travel as ONE script call when the turn ends:
   * one command, one socket write, one Lua invocation, instead of one each (on a cluster, one per
   * slot). An urgent call goes out at once, with whatever is queued so far (see AdmitInput.urgent).
   */
  private enqueue(type: 'a' | 'r', keys: string[], args: (string | number)[], urgent = false): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const tag = this.cluster ? hashTag(keys[0]) : '';
      let queue = this.queues.get(tag);
      if (!queue) this.queues.set(tag, (queue = []));
      queue.push({ type, keys, args, resolve, reject });
      if (urgent) return this.sendQueued();
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.sendQueued();
      });
    });
  }

  /** Sends everything queued (a flush scheduled before an urgent call may find nothing left). */
  private sendQueued(): void {
    const queues = this.queues;
    this.queues = new Map();
    for (const all of queues.values()) {
      for (let i = 0; i < all.length; i += MAX_BATCH_ITEMS) this.send(all.slice(i, i + MAX_BATCH_ITEMS));
    }
  }

  private send(items: Queued[]): void {
    if (items.length === 1) {
      const it = items[0];
      (it.type === 'a' ? admitScript : releaseScript).run(this.client, it.keys, it.args).then(it.resolve, it.reject);
      return;
    }
    // KEYS: every item's keys in order; ARGV: the item count, then per item its header and arguments.
    const segments: (readonly Arg[])[] = [];
    let numKeys = 0;
    for (const it of items) {
      segments.push(it.keys);
      numKeys += it.keys.length;
    }
    segments.push([items.length]);
    for (const it of items) segments.push([it.type, it.keys.length, it.args.length], it.args);
    batchScript.runSegments(this.client, numKeys, segments, items[0].keys[0]).then(
      (replies) => {
        items.forEach((it, i) => {
          const reply = (replies as unknown[])[i];
          if (reply instanceof Error) it.reject(reply);
          else it.resolve(reply);
        });
      },
      (err) => {
        for (const it of items) it.reject(err);
      },
    );
  }

  admit(input: AdmitInput): Promise<AdmitResult> {
    if (this.cluster) {
      const parts = splitAdmission(input);
      if (parts.length > 1) return this.admitParts(input, parts);
    }
    return this.admitRaw(input).then((reply) => decodeAdmitReply(reply, input.rules, input.reserve?.amount ?? 0n));
  }

  /** One script call's admission (all its keys in one slot on a cluster); the raw reply. */
  private admitRaw(input: AdmitInput): Promise<unknown> {
    const keys = input.rules.map((r) => r.key);
    if (input.reserve) keys.push(input.reserve.key, reservationsKey(input.reserve.key), goneReservationsKey(input.reserve.key));
    const deny = input.denyKeys ?? [];
    for (const k of deny) keys.push(k);
    const args: (string | number)[] = [
      input.leaseId,
      input.leaseTtlMs,
      input.rules.length,
      input.reserve ? input.reserve.amount.toString() : '',
      deny.length,
    ];
    for (const rule of input.rules) {
      // 'rwindow': a requests window, whose exact remaining count and reset feed the response headers.
      const kind = rule.kind === 'window' && rule.requests ? 'rwindow' : rule.kind;
      args.push(kind, rule.limit, rule.kind === 'concurrency' ? 0 : rule.windowMs);
    }
    const budgets = input.reserve ? (input.budgets ?? []) : [];
    args.push(budgets.length);
    if (budgets.length > 0) {
      // Budget keys go between the balance's and the deny keys.
      const budgetKeys: string[] = [];
      for (const b of budgets) {
        budgetKeys.push(b.key, reservationsKey(b.key), goneReservationsKey(b.key));
        args.push((input.reserve!.amount - b.cap).toString());
      }
      keys.splice(keys.length - deny.length, 0, ...budgetKeys);
    }
    return this.enqueue('a', keys, args, input.urgent);
  }

  /**
   * An admission over several slots (Redis Cluster): the account's part, the shared layers' (the
   * global rate, a model's caps, each on its own slot) and the key's deny markers, sent together.
   * Each part is exact on its own slot; when one refuses, the parts that admitted are undone (their
   * counts taken back, leases and reservation released), so a refusal leaves nothing counted
   * except, for the moment between, a slot another admission may have been refused for.
   */
  private async admitParts(input: AdmitInput, parts: AdmitPart[]): Promise<AdmitResult> {
    const settled = await Promise.allSettled(parts.map((p) => this.admitRaw(p.input)));
    const decoded: (AdmitResult | undefined)[] = settled.map((r, i) =>
      r.status === 'fulfilled' ? decodeAdmitReply(r.value, parts[i].input.rules, parts[i].input.reserve?.amount ?? 0n) : undefined,
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const states: RuleState[] = new Array<RuleState>(input.rules.length);
    let refusal: Refusal | undefined;
    let balance: bigint | undefined;
    decoded.forEach((d, i) => {
      if (!d) return;
      const part = parts[i];
      if (d.ok) {
        d.states.forEach((st, j) => (states[part.ruleIndex[j]] = st));
        if (d.balance !== undefined) balance = d.balance;
        return;
      }
      if (d.reason === 'limit') d.states.forEach((st, j) => (states[part.ruleIndex[j]] = st));
      // A part's rules are the admission's own objects; its deny index is mapped back.
      const mapped: Refusal = d.reason === 'denied' ? { ok: false, reason: 'denied', index: part.denyIndex[d.index] } : d;
      if (!refusal || worseRefusal(mapped, refusal)) refusal = mapped;
    });
    if (!failed && !refusal) return balance === undefined ? { ok: true, states } : { ok: true, states, balance };
    // Undo what the other parts admitted (not awaited by the caller's answer beyond this call).
    await Promise.all(
      decoded.map((d, i) => {
        if (!d?.ok) return undefined;
        const reply = (settled[i] as PromiseFulfilledResult<unknown>).value as unknown[];
        return this.undoPart(parts[i].input, reply).catch(() => undefined);
      }),
    );
    if (failed) throw failed.reason;
    if (refusal!.reason === 'limit') {
      for (let i = 0; i < states.length; i++) states[i] ??= { rule: input.rules[i], limit: input.rules[i].limit, remaining: input.rules[i].limit, resetMs: 0 };
      return { ...refusal!, states };
    }
    return refusal!;
  }

  /** Takes back an admitted part: window and GCRA counts by UNDO_LUA, leases and reservation by release. */
  private async undoPart(part: AdmitInput, reply: unknown[]): Promise<void> {
    const n = part.rules.length;
    const sec = reply[4 + 2 * n] as string;
    const usec = reply[5 + 2 * n] as string;
    const counted = part.rules.filter((r) => r.kind === 'window' || r.kind === 'gcra');
    const calls: Promise<unknown>[] = [];
    if (counted.length > 0) {
      const args: Arg[] = [sec, usec];
      for (const r of counted) args.push(r.kind, r.limit, r.windowMs);
      calls.push(undoScript.run(this.client, counted.map((r) => r.key), args));
    }
    const concurrencyKeys = part.rules.filter((r) => r.kind === 'concurrency').map((r) => r.key);
    const reserve = part.reserve;
    if (concurrencyKeys.length > 0 || reserve) {
      calls.push(
        this.release({
          leaseId: part.leaseId,
          concurrencyKeys,
          settle: reserve ? { key: reserve.key, delta: reserve.amount, reserved: reserve.amount } : undefined,
          budgets: reserve ? (part.budgets ?? []).map((b) => ({ key: b.key, delta: reserve.amount, reserved: reserve.amount })) : undefined,
          urgent: true,
        }),
      );
    }
    await Promise.all(calls);
  }

  async release(input: ReleaseInput): Promise<void> {
    if (this.cluster) {
      const parts = splitRelease(input);
      if (parts.length > 1) {
        await Promise.all(parts.map((p) => this.releaseRaw(p)));
        return;
      }
    }
    await this.releaseRaw(input);
  }

  private async releaseRaw(input: ReleaseInput): Promise<void> {
    const keys = [...input.concurrencyKeys];
    // A reservation lease is settled even at delta 0 (its lease must go); a plain settlement of 0 is nothing.
    const settle = input.settle && (input.settle.delta !== 0n || input.settle.reserved !== undefined) ? input.settle : undefined;
    const leased = settle?.reserved !== undefined;
    if (settle) keys.push(settle.key);
    if (settle && leased) keys.push(reservationsKey(settle.key), goneReservationsKey(settle.key));
    const budgets = input.budgets ?? [];
    const args: (string | number)[] = [
      input.leaseId,
      input.concurrencyKeys.length,
      settle ? settle.delta.toString() : '',
      settle && leased ? String(settle.reserved) : '',
      budgets.length,
    ];
    for (const b of budgets) {
      keys.push(b.key, reservationsKey(b.key), goneReservationsKey(b.key));
      args.push(b.delta.toString(), b.reserved.toString());
    }
    for (const u of input.usage ?? []) {
      if (u.amount === 0) continue;
      keys.push(u.key);
      args.push(u.windowMs, Math.round(u.amount));
    }
    if (keys.length === 0) return;
    await this.enqueue('r', keys, args, input.urgent);
  }

  async renew(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    const leased = reservation !== undefined && reservation.amount !== 0n;
    if (concurrencyKeys.length === 0 && !leased) return;
    if (this.cluster) {
      const byTag = groupBy(concurrencyKeys, hashTag);
      const resTag = leased ? hashTag(reservation.key) : undefined;
      if (resTag !== undefined && !byTag.has(resTag)) byTag.set(resTag, []);
      if (byTag.size > 1) {
        await Promise.all([...byTag].map(([tag, keys]) => this.renewRaw(keys, leaseId, leaseTtlMs, tag === resTag ? reservation : undefined)));
        return;
      }
    }
    await this.renewRaw(concurrencyKeys, leaseId, leaseTtlMs, leased ? reservation : undefined);
  }

  private async renewRaw(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    const leased = reservation !== undefined && reservation.amount !== 0n;
    if (concurrencyKeys.length === 0 && !leased) return;
    const keys = leased ? [...concurrencyKeys, reservationsKey(reservation.key)] : concurrencyKeys;
    await renewScript.run(this.client, keys, [leaseId, leaseTtlMs, leased ? `${leaseId}|${reservation.amount}` : '']);
  }

  async initBalance(key: string, amount: bigint, credits: string[] = [], included: string[] = credits, ttlMs?: number): Promise<void> {
    const keys = [key, reservationsKey(key), goneReservationsKey(key), lateCreditsKey(key), ...credits.map((id) => creditMarkerKey(key, id))];
    await reloadScript.run(this.client, keys, [amount.toString(), CREDIT_MARKER_MS, ...included]);
    // Loads only (not the hot path): a second command rather than another argument of the script.
    if (ttlMs !== undefined) await sendEncoded(this.client, 'pexpire', [[key, Math.ceil(ttlMs)]], key);
  }

  async applyCredit(entryId: string, key: string, delta: bigint): Promise<boolean> {
    await creditScript.run(this.client, [creditMarkerKey(key, entryId), key, lateCreditsKey(key)], [delta.toString(), CREDIT_MARKER_MS, entryId, LATE_CREDIT_MS]);
    return true;
  }

  async adjustBalance(key: string, delta: bigint): Promise<void> {
    await adjustScript.run(this.client, [key], [delta.toString()]);
  }

  async forgetBalance(key: string): Promise<void> {
    await reloadScript.run(this.client, [key, reservationsKey(key), goneReservationsKey(key)], []);
  }

  async denied(keys: string[]): Promise<number> {
    if (keys.length === 0) return -1;
    if (this.cluster) {
      // One GET per key (each its own slot, in parallel): markers are few and this is off the hot path.
      const values = await Promise.all(keys.map((k) => sendEncoded(this.client, 'get', [[k]], k)));
      return values.findIndex((v) => v !== null);
    }
    const values = (await sendEncoded(this.client, 'mget', [keys])) as (string | null)[];
    return values.findIndex((v) => v !== null);
  }

  async close(): Promise<void> {
    if (!this.ownsClient) return;
    try {
      await this.client.quit();
    } catch {
      // Already disconnected (e.g. Redis down): drop the socket and stop reconnecting.
      this.client.disconnect();
    }
  }
}

function groupBy<T>(items: readonly T[], tagOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const tag = tagOf(item);
    const group = out.get(tag);
    if (group) group.push(item);
    else out.set(tag, [item]);
  }
  return out;
}

/** The parts of an admission by hash tag: rules, the reservation (with its budgets: the account's) and deny keys. */
function splitAdmission(input: AdmitInput): AdmitPart[] {
  const parts = new Map<string, AdmitPart>();
  const partOf = (tag: string): AdmitPart => {
    let p = parts.get(tag);
    if (!p) parts.set(tag, (p = { input: { rules: [], leaseId: input.leaseId, leaseTtlMs: input.leaseTtlMs, denyKeys: [], urgent: input.urgent }, ruleIndex: [], denyIndex: [] }));
    return p;
  };
  input.rules.forEach((rule, i) => {
    const p = partOf(hashTag(rule.key));
    p.input.rules.push(rule);
    p.ruleIndex.push(i);
  });
  if (input.reserve) {
    const p = partOf(hashTag(input.reserve.key));
    p.input.reserve = input.reserve;
    if (input.budgets) p.input.budgets = input.budgets;
  }
  (input.denyKeys ?? []).forEach((key, i) => {
    const p = partOf(hashTag(key));
    p.input.denyKeys!.push(key);
    p.denyIndex.push(i);
  });
  return [...parts.values()];
}

/** A release by hash tag: concurrency and quota keys where they are, the settlements with the balance. */
function splitRelease(input: ReleaseInput): ReleaseInput[] {
  const parts = new Map<string, ReleaseInput>();
  const partOf = (tag: string): ReleaseInput => {
    let p = parts.get(tag);
    if (!p) parts.set(tag, (p = { leaseId: input.leaseId, concurrencyKeys: [], urgent: input.urgent }));
    return p;
  };
  for (const key of input.concurrencyKeys) partOf(hashTag(key)).concurrencyKeys.push(key);
  if (input.settle) {
    const p = partOf(hashTag(input.settle.key));
    p.settle = input.settle;
    if (input.budgets) p.budgets = input.budgets;
  } else if (input.budgets?.length) {
    partOf(hashTag(input.budgets[0].key)).budgets = input.budgets;
  }
  for (const u of input.usage ?? []) (partOf(hashTag(u.key)).usage ??= []).push(u);
  return [...parts.values()];
}

type Refusal = Exclude<AdmitResult, { ok: true }>;

/** Which refusal of a split admission is reported: a deny marker, then the longest limit wait, then the balance. */
function worseRefusal(a: Refusal, b: Refusal): boolean {
  const rank = (r: Refusal) => (r.reason === 'denied' ? 4 : r.reason === 'limit' ? 3 : r.reason === 'balance_unknown' ? 2 : 1);
  if (rank(a) !== rank(b)) return rank(a) > rank(b);
  return a.reason === 'limit' && b.reason === 'limit' && a.retryAfterMs > b.retryAfterMs;
}

function decodeAdmitReply(reply: unknown, rules: Rule[], reserved: bigint): AdmitResult {
  if (!Array.isArray(reply)) throw new Error(`unexpected limiter reply: ${JSON.stringify(reply)}`);
  const [status, index, retryAfterMs, available] = reply as [number, number, number, string];
  switch (status) {
    case 1:
      return available ? { ok: true, states: decodeStates(reply, rules), balance: BigInt(available) - reserved } : { ok: true, states: decodeStates(reply, rules) };
    case 0:
      return { ok: false, reason: 'limit', rule: rules[index], retryAfterMs, states: decodeStates(reply, rules) };
    case 2:
      return index ? { ok: false, reason: 'balance', available: BigInt(available), index } : { ok: false, reason: 'balance', available: BigInt(available) };
    case 3:
      return index ? { ok: false, reason: 'balance_unknown', index } : { ok: false, reason: 'balance_unknown' };
    case 4:
      return { ok: false, reason: 'denied', index };
    default:
      throw new Error(`unexpected limiter status: ${String(status)}`);
  }
}

function decodeStates(reply: unknown[], rules: Rule[]): RuleState[] {
  return rules.map((rule, i) => ({
    rule,
    limit: rule.limit,
    remaining: Number(reply[4 + 2 * i]),
    resetMs: Number(reply[5 + 2 * i]),
  }));
}

function isNoScriptError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

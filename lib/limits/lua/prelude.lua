
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
-- Window states kept by a batch (check_window, BATCH_LUA makes the tables); nil in single calls.
local win_state, win_dirty

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

import { createHash, randomUUID } from 'node:crypto';
import { newRedisClient, redisConfigured, type RedisClient } from '@/lib/redis-client';
import { codedError, type GatewayError } from '@/lib/errors';
import { FAILOVER_REDIS_OPTIONS } from '@/lib/limits';
import { log, errorFields } from '@/lib/log';
import { singleton } from '@/lib/singleton';
import { normaliseEmail } from '@/lib/auth/password-rules';

// Failed sign-ins, counted in Redis (shared by every instance) when REDIS_URL is set, in-process
// otherwise or while Redis does not answer, in two budgets over LOGIN_FAILURE_WINDOW_MS:
//
// - per account and client address, LOGIN_FAILURES_PER_ACCOUNT: a guesser is stopped on the account
//   it tries, while the owner signing in from elsewhere is not. A budget per account alone let
//   anyone lock its owner out for the whole window with ten wrong passwords (#37 item 22).
// - per client address across accounts, LOGIN_FAILURES_PER_IP: one address cannot spread its
//   guesses (or its lock-outs) over many accounts. The per-minute login limit per address stays.
//
// An attacker with many addresses gets LOGIN_FAILURES_PER_ACCOUNT guesses per address per window on
// one account: the price of never locking the owner out, with passwords checked against the
// common ones at sign-up.
//
// - Each attempt is counted before the password is checked and uncounted when it succeeds, so
//   concurrent guesses cannot slip past the count and successful sign-ins never use it up.
// - A sliding window, not a lock: the oldest failure stops counting 15 minutes after it happened,
//   so an attacker can keep an account's password sign-in throttled only by keeping on failing, and
//   never for longer than the window after they stop.
// - Keyed by the normalised email whether or not the account exists, and checked before the
//   account is looked up: an unknown email is throttled exactly like a known one.

export const LOGIN_FAILURES_PER_ACCOUNT = 10;
export const LOGIN_FAILURES_PER_IP = 50;
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;

export interface ThrottleStore {
  /** Counts an attempt unless `limit` are counted already; then the ms until the oldest expires. */
  begin(key: string, member: string, now: number, limit: number, windowMs: number): Promise<{ ok: true } | { ok: false; retryAfterMs: number }>;
  /** Uncounts an attempt (it succeeded). */
  forget(key: string, member: string): Promise<void>;
}

/** Sliding log in one sorted set per account; begin is one atomic script call. */
const BEGIN_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + tonumber(ARGV[2]) - tonumber(ARGV[1])
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return -1`;

export class RedisThrottleStore implements ThrottleStore {
  constructor(private readonly client: RedisClient) {}

  async begin(key: string, member: string, now: number, limit: number, windowMs: number) {
    const wait = Number(await this.client.eval(BEGIN_LUA, 1, key, String(now), String(windowMs), String(limit), member));
    return wait < 0 ? ({ ok: true } as const) : ({ ok: false, retryAfterMs: Math.max(1, wait) } as const);
  }

  async forget(key: string, member: string) {
    await this.client.zrem(key, member);
  }
}

export class MemoryThrottleStore implements ThrottleStore {
  private readonly logs = new Map<string, { at: number; member: string }[]>();

  async begin(key: string, member: string, now: number, limit: number, windowMs: number) {
    const live = (this.logs.get(key) ?? []).filter((e) => e.at > now - windowMs);
    if (live.length >= limit) {
      this.logs.set(key, live);
      return { ok: false, retryAfterMs: Math.max(1, live[0].at + windowMs - now) } as const;
    }
    live.push({ at: now, member });
    this.logs.set(key, live);
    // Bound the memory an address-spraying attacker can make us hold.
    if (this.logs.size > 100_000) for (const [k, v] of this.logs) if (!v.some((e) => e.at > now - windowMs)) this.logs.delete(k);
    return { ok: true } as const;
  }

  async forget(key: string, member: string) {
    const live = this.logs.get(key);
    if (live)
      this.logs.set(
        key,
        live.filter((e) => e.member !== member),
      );
  }
}

/** Redis first; while it fails, the in-process store (as the limiter falls back). */
class FailoverThrottleStore implements ThrottleStore {
  private readonly memory = new MemoryThrottleStore();
  constructor(private readonly redis: RedisThrottleStore) {}

  async begin(key: string, member: string, now: number, limit: number, windowMs: number) {
    try {
      return await this.redis.begin(key, member, now, limit, windowMs);
    } catch (err) {
      log('warn', 'login throttle: redis unavailable, counting in-process', errorFields(err));
      return this.memory.begin(key, member, now, limit, windowMs);
    }
  }

  async forget(key: string, member: string) {
    await Promise.all([this.redis.forget(key, member).catch(() => undefined), this.memory.forget(key, member)]);
  }
}

/** The shared sliding-window store (also counts password reset requests per email, lib/auth/password-reset.ts). */
export function throttleStore(): ThrottleStore {
  return singleton('login-throttle', () =>
    redisConfigured()
      ? new FailoverThrottleStore(new RedisThrottleStore(newRedisClient('login-throttle', FAILOVER_REDIS_OPTIONS)!))
      : new MemoryThrottleStore(),
  );
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
/** The budget of one account from one client address (the email as normaliseEmail gives it). */
export const loginThrottleKey = (email: string, ip: string) => `gw:login:acct-ip:${digest(`${normaliseEmail(email)}\n${ip}`)}`;
/** The budget of one client address across accounts. */
export const loginIpThrottleKey = (ip: string) => `gw:login:ip:${digest(ip)}`;

export interface LoginAttempt {
  /** The password was right: this attempt does not count against the account. */
  succeeded(): Promise<void>;
}

function throttled(which: 'auth.throttled_address' | 'auth.throttled_account', retryAfterMs: number): GatewayError {
  return codedError('rate_limit_exceeded', which, { seconds: Math.ceil(retryAfterMs / 1000) }, { retryAfterMs });
}

/**
 * Counts a sign-in attempt for this email from this client address, or throws 429 (with
 * Retry-After) when either budget is spent. Call before checking the password.
 */
export async function beginLoginAttempt(email: string, ip: string, store: ThrottleStore = throttleStore(), now = Date.now()): Promise<LoginAttempt> {
  const accountKey = loginThrottleKey(email, ip);
  const ipKey = loginIpThrottleKey(ip);
  const member = `${now}:${randomUUID()}`;
  const byIp = await store.begin(ipKey, member, now, LOGIN_FAILURES_PER_IP, LOGIN_FAILURE_WINDOW_MS);
  if (!byIp.ok) throw throttled('auth.throttled_address', byIp.retryAfterMs);
  const byAccount = await store.begin(accountKey, member, now, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURE_WINDOW_MS);
  if (!byAccount.ok) {
    // Refused before any password check: not a failure the address should pay for twice.
    await store.forget(ipKey, member);
    throw throttled('auth.throttled_account', byAccount.retryAfterMs);
  }
  return { succeeded: () => Promise.all([store.forget(accountKey, member), store.forget(ipKey, member)]).then(() => undefined) };
}

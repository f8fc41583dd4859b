// In-process limiter with the same semantics as RedisLimiter (see redis-limiter.ts).
// Used when no Redis is configured (single instance) and as the fallback while Redis
// is unreachable. All logic is synchronous, so one admit() is atomic within the process
// exactly like one Lua script is atomic within Redis.

import type {
  AdmitInput,
  AdmitResult,
  ConcurrencyRule,
  GcraRule,
  Limiter,
  QuotaRule,
  ReleaseInput,
  Rule,
  RuleState,
  TokenSettlement,
  TokensRule,
  UsageRule,
  WindowRule,
} from './types';

const HOUR_MS = 3_600_000;
/** Concurrency retry hint cap: leases are normally released long before they expire. */
const CONCURRENCY_RETRY_CAP_MS = 1_000;
const DEFAULT_SWEEP_MS = 10_000;

export interface MemoryLimiterOptions {
  /** Clock in epoch milliseconds (tests may inject one). */
  now?: () => number;
  /** Period of the background sweep that drops expired keys; 0 disables it. */
  sweepIntervalMs?: number;
}

/** A window rule's fixed sub-buckets (see windowShape). */
interface WindowBuckets {
  /** Bucket index (floor(t / g)) -> admissions in it, in ascending bucket order. */
  counts: Map<number, number>;
  /** Sum of the counts. */
  n: number;
  expiresAt: number;
}

/** Sub-buckets per window (as WINDOW_BUCKETS in the Redis limiter's Lua). */
const WINDOW_BUCKETS = 60;

/**
 * A window of windowMs is cut into buckets of g ms; nb of them span it. An admission in bucket k
 * counts buckets k - nb .. k (every span of windowMs touches at most nb + 1 buckets): never more
 * than the limit in any span of windowMs, refused at most one bucket early. Bucket b leaves the
 * count at (b + nb + 1) * g.
 */
export function windowShape(windowMs: number): { g: number; nb: number } {
  const g = Math.max(1, Math.floor(windowMs / WINDOW_BUCKETS));
  return { g, nb: Math.ceil(windowMs / g) };
}

/** What a window counts at `now`: its buckets still inside (those of the last nb + 1, as an admission counts). */
export function windowCount(counts: Iterable<[number, number]>, windowMs: number, now: number): number {
  const { g, nb } = windowShape(windowMs);
  const first = Math.floor(now / g) - nb;
  let n = 0;
  for (const [bucket, c] of counts) if (bucket >= first) n += c;
  return Math.max(0, n);
}

interface LeaseSet {
  /** leaseId -> expiry timestamp. */
  leases: Map<string, number>;
  expiresAt: number;
}

interface GcraState {
  tat: number;
  expiresAt: number;
}

/** A balance reservation held as a lease (AdmitInput.reserve). */
interface Reservation {
  amount: bigint;
  expiresAt: number;
}

/** How long reservations returned unsettled (and applied-credit markers) are remembered. */
const GONE_MS = 86_400_000;
const CREDIT_MARKER_MS = 30 * 86_400_000;
/** How long a settled charge is remembered (as RedisLimiter's CHARGE_MARKER_MS). */
const CHARGE_MARKER_MS = 26 * 3_600_000;
/** How long a credit applied to an unloaded balance waits for its load (as RedisLimiter's LATE_CREDIT_MS). */
const LATE_CREDIT_MS = 10 * 60_000;

interface QuotaBuckets {
  /** Hour bucket index (floor(t / 1h)) -> tokens used in that hour. */
  buckets: Map<number, number>;
  expiresAt: number;
}

/** Result of checking one rule without mutating anything. */
interface RuleCheck {
  ok: boolean;
  retryAfterMs: number;
  /** State reported when the request is refused (nothing applied). */
  current: RuleState;
  /** Applies the rule's mutation and returns the state after admission. */
  apply: () => RuleState;
}

export class MemoryLimiter implements Limiter {
  private readonly windows = new Map<string, WindowBuckets>();
  private readonly leaseSets = new Map<string, LeaseSet>();
  private readonly gcras = new Map<string, GcraState>();
  private readonly quotas = new Map<string, QuotaBuckets>();
  private readonly balances = new Map<string, bigint>();
  /** Balance key -> leaseId -> its open reservation. */
  private readonly reservations = new Map<string, Map<string, Reservation>>();
  /** Balance key -> leaseId|amount -> when it was returned to the balance unsettled. */
  private readonly gone = new Map<string, Map<string, number>>();
  /** Credit ledger entries applied (entry id -> marker expiry). */
  private readonly appliedCredits = new Map<string, number>();
  /** Charges settled (balance key:charged:charge id -> marker expiry; ReleaseInput.chargeId). */
  private readonly chargedMarkers = new Map<string, number>();
  /** Credits applied while their balance was not loaded (see RedisLimiter's CREDIT_LUA). */
  private readonly lateCredits = new Map<string, { until: number; credits: Map<string, bigint> }>();
  private readonly now: () => number;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: MemoryLimiterOptions = {}) {
    this.now = options.now ?? Date.now;
    const sweepMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_MS;
    if (sweepMs > 0) {
      this.sweepTimer = setInterval(() => this.sweep(), sweepMs);
      // The sweep is housekeeping only; it must never keep the process alive.
      this.sweepTimer.unref();
    }
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const now = this.now();
    const checks = input.rules.map((rule, i) => this.check(rule, i, input, now));

    const refused = pickRefusal(checks);
    if (refused >= 0) {
      return {
        ok: false,
        reason: 'limit',
        rule: input.rules[refused],
        retryAfterMs: checks[refused].retryAfterMs,
        states: checks.map((c) => c.current),
      };
    }

    if (input.reserve) {
      let balance = this.balances.get(input.reserve.key);
      if (balance === undefined) return { ok: false, reason: 'balance_unknown' };
      balance = this.reapExpired(input.reserve.key, balance, now);
      if (balance < input.reserve.amount) return { ok: false, reason: 'balance', available: balance };
      const budgets = input.budgets ?? [];
      for (let j = 0; j < budgets.length; j++) {
        if (!this.balances.has(budgets[j].key)) return { ok: false, reason: 'balance_unknown', index: j + 1 };
      }
      // A budget's counter is minus its spend: it must stay at or above amount - cap (as in Redis).
      for (let j = 0; j < budgets.length; j++) {
        const counter = this.reapExpired(budgets[j].key, this.balances.get(budgets[j].key)!, now);
        if (counter < input.reserve.amount - budgets[j].cap) return { ok: false, reason: 'balance', available: counter, index: j + 1 };
      }
    }

    // Everything passed: only now apply the mutations (all or nothing).
    const states = checks.map((c) => c.apply());
    if (input.reserve) {
      const { key, amount } = input.reserve;
      const balance = this.takeReservation(key, amount, input.leaseId, now + input.leaseTtlMs);
      for (const b of input.budgets ?? []) this.takeReservation(b.key, amount, input.leaseId, now + input.leaseTtlMs);
      return { ok: true, states, balance };
    }
    return { ok: true, states };
  }

  /** Takes `amount` from a balance (or budget counter) as a lease; answers what is left. */
  private takeReservation(key: string, amount: bigint, leaseId: string, expiresAt: number): bigint {
    const balance = (this.balances.get(key) ?? 0n) - amount;
    this.balances.set(key, balance);
    if (amount !== 0n) {
      let open = this.reservations.get(key);
      if (!open) this.reservations.set(key, (open = new Map()));
      open.set(leaseId, { amount, expiresAt });
    }
    return balance;
  }

  /** As in Redis: live, settle; returned unsettled already, charge the cost; neither, settled before. */
  private settleReservation(key: string, delta: bigint, reserved: bigint, leaseId: string): void {
    const open = this.reservations.get(key);
    if (reserved === 0n || open?.delete(leaseId)) {
      if (open?.size === 0) this.reservations.delete(key);
      this.addToBalance(key, delta);
    } else if (this.gone.get(key)?.delete(`${leaseId}|${reserved}`)) {
      this.addToBalance(key, delta - reserved);
    }
  }

  async release(input: ReleaseInput): Promise<void> {
    const now = this.now();
    for (const key of input.concurrencyKeys) this.leaseSets.get(key)?.leases.delete(input.leaseId);
    const settle = input.settle;
    // A charge settled before (ReleaseInput.chargeId): this settlement charges nothing.
    let dup = false;
    if (settle && input.chargeId !== undefined) {
      const marker = `${settle.key}:charged:${input.chargeId}`;
      dup = (this.chargedMarkers.get(marker) ?? 0) > now;
      if (!dup) this.chargedMarkers.set(marker, now + CHARGE_MARKER_MS);
    }
    if (settle && settle.reserved !== undefined) {
      this.settleReservation(settle.key, dup ? settle.reserved : settle.delta, settle.reserved, input.leaseId);
    } else if (settle && settle.delta !== 0n && !dup) {
      this.addToBalance(settle.key, settle.delta);
    }
    for (const b of input.budgets ?? []) this.settleReservation(b.key, dup ? b.reserved : b.delta, b.reserved, input.leaseId);
    for (const u of input.usage ?? []) this.addUsage(u.key, u.windowMs, u.amount, now);
    for (const t of input.tokens ?? []) this.settleTokens(t);
  }

  /** A token reservation settled in the bucket it was counted in, while that bucket is in the window (as RedisLimiter's settle_tokens). */
  private settleTokens(t: TokenSettlement): void {
    const w = this.windows.get(t.key);
    const bucket = Math.floor(t.at / windowShape(t.windowMs).g);
    const c = w?.counts.get(bucket);
    if (!w || c === undefined || c <= 0) return;
    const d = Math.max(Math.round(t.delta), -c);
    w.counts.set(bucket, c + d);
    w.n += d;
    if (w.n <= 0) this.windows.delete(t.key);
  }

  async renew(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void> {
    const now = this.now();
    const held = reservation && this.reservations.get(reservation.key)?.get(leaseId);
    // Not expired yet (an expired one may already have been returned to the balance: not revived).
    if (held && held.expiresAt > now) held.expiresAt = now + leaseTtlMs;
    for (const key of concurrencyKeys) {
      const set = this.liveLeaseSet(key, now);
      // Like ZADD XX: only a lease that is still held is extended.
      if (!set?.leases.has(leaseId)) continue;
      set.leases.set(leaseId, now + leaseTtlMs);
      set.expiresAt = Math.max(set.expiresAt, now + 2 * leaseTtlMs);
    }
  }

  async initBalance(key: string, amount: bigint, credits: string[] = [], included: string[] = credits): Promise<void> {
    if (this.balances.has(key)) return;
    const now = this.now();
    // Credits applied while the balance was not loaded and that the load did not read (see CREDIT_LUA).
    const late = this.lateCredits.get(key);
    this.lateCredits.delete(key);
    let balance = amount;
    if (late && late.until > now) {
      const seen = new Set(included);
      for (const [id, delta] of late.credits) if (!seen.has(id)) balance += delta;
    }
    this.balances.set(key, balance);
    for (const id of credits) this.appliedCredits.set(id, now + CREDIT_MARKER_MS);
    this.abandonReservations(key);
  }

  async adjustBalance(key: string, delta: bigint): Promise<void> {
    this.addToBalance(key, delta);
  }

  async applyCredit(entryId: string, key: string, delta: bigint): Promise<boolean> {
    const now = this.now();
    const marker = this.appliedCredits.get(entryId);
    if (marker === undefined || marker <= now) {
      this.appliedCredits.set(entryId, now + CREDIT_MARKER_MS);
      if (this.balances.has(key)) this.addToBalance(key, delta);
      else {
        const late = this.lateCredits.get(key);
        const credits = late && late.until > now ? late.credits : new Map<string, bigint>();
        credits.set(entryId, delta);
        this.lateCredits.set(key, { until: now + LATE_CREDIT_MS, credits });
      }
    }
    return true;
  }

  /** Whether this credit ledger entry was applied here (the failover limiter's fallback). */
  hasAppliedCredit(entryId: string): boolean {
    const marker = this.appliedCredits.get(entryId);
    return marker !== undefined && marker > this.now();
  }

  async forgetBalance(key: string): Promise<void> {
    this.balances.delete(key);
    this.abandonReservations(key);
  }

  async usage(rules: readonly UsageRule[]): Promise<number[]> {
    const now = this.now();
    return rules.map((rule) => {
      if (rule.kind === 'concurrency') return this.liveLeaseSet(rule.key, now)?.leases.size ?? 0;
      return windowCount(this.windows.get(rule.key)?.counts ?? new Map<number, number>(), rule.windowMs, now);
    });
  }

  /** Deny keys live in Redis only: with one instance, invalidation is synchronous (lib/events.ts). */
  async denied(): Promise<number> {
    return -1;
  }

  async close(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  /** Keys of the balances currently loaded (the failover limiter resyncs them). */
  balanceKeys(): string[] {
    return [...this.balances.keys()];
  }

  /** Drop every loaded balance so each is reloaded from the database on next use. */
  clearBalances(): void {
    for (const key of [...this.reservations.keys()]) this.abandonReservations(key);
    this.balances.clear();
  }

  /**
   * The balance is reloaded from the database, which has none of its open reservations: they are
   * gone, so their settlements charge only the cost.
   */
  private abandonReservations(key: string): void {
    const open = this.reservations.get(key);
    if (!open) return;
    this.reservations.delete(key);
    const now = this.now();
    let gone = this.gone.get(key);
    if (!gone) this.gone.set(key, (gone = new Map()));
    for (const [leaseId, r] of open) gone.set(`${leaseId}|${r.amount}`, now);
  }

  /** Returns the expired reservations of a balance to it (their instance never settled them). */
  private reapExpired(key: string, balance: bigint, now: number): bigint {
    const open = this.reservations.get(key);
    if (!open) return balance;
    let gone: Map<string, number> | undefined;
    for (const [leaseId, r] of open) {
      if (r.expiresAt > now) continue;
      open.delete(leaseId);
      balance += r.amount;
      gone ??= this.gone.get(key) ?? new Map();
      gone.set(`${leaseId}|${r.amount}`, now);
    }
    if (gone) this.gone.set(key, gone);
    if (open.size === 0) this.reservations.delete(key);
    this.balances.set(key, balance);
    return balance;
  }

  /** Number of live keys (for tests and leak checks). */
  size(): number {
    return this.windows.size + this.leaseSets.size + this.gcras.size + this.quotas.size + this.balances.size + this.reservations.size + this.gone.size;
  }

  /** Drops expired keys; runs periodically and may be called directly. */
  sweep(): void {
    const now = this.now();
    for (const [key, log] of this.windows) if (log.expiresAt <= now) this.windows.delete(key);
    for (const [key, g] of this.gcras) if (g.expiresAt <= now) this.gcras.delete(key);
    for (const [key, q] of this.quotas) if (q.expiresAt <= now) this.quotas.delete(key);
    for (const key of [...this.leaseSets.keys()]) this.liveLeaseSet(key, now);
    for (const [key, gone] of this.gone) {
      for (const [member, at] of gone) if (at + GONE_MS <= now) gone.delete(member);
      if (gone.size === 0) this.gone.delete(key);
    }
    for (const [id, expiry] of this.appliedCredits) if (expiry <= now) this.appliedCredits.delete(id);
    for (const [id, expiry] of this.chargedMarkers) if (expiry <= now) this.chargedMarkers.delete(id);
  }

  // ---- per-rule checks -------------------------------------------------------------

  private check(rule: Rule, index: number, input: AdmitInput, now: number): RuleCheck {
    switch (rule.kind) {
      case 'window':
        return this.checkWindow(rule, now);
      case 'tokens':
        return this.checkWindow(rule, now, input.tokens ?? 0);
      case 'gcra':
        return this.checkGcra(rule, now);
      case 'concurrency':
        return this.checkConcurrency(rule, input.leaseId, input.leaseTtlMs, now);
      case 'quota':
        return this.checkQuota(rule, now);
      default:
        return assertNever(rule, index);
    }
  }

  /**
   * Fixed sub-buckets (windowShape): O(1) state whatever the limit. `amount`: what the admission
   * counts (1; a tokens rule's reservation), admitted while the count plus it stays within the limit.
   */
  private checkWindow(rule: WindowRule | TokensRule, now: number, amount = 1): RuleCheck {
    const { g, nb } = windowShape(rule.windowMs);
    const k = Math.floor(now / g);
    const w = this.liveWindow(rule.key, k - nb);
    const count = w?.n ?? 0;
    const lo = w ? w.counts.keys().next().value! : undefined;
    const leaves = (b: number) => Math.max(0, Math.ceil((b + nb + 1) * g - now));
    const reset = lo === undefined ? 0 : leaves(lo);
    const ok = count + amount <= rule.limit;
    let retryAfterMs = 0;
    if (!ok && !w) retryAfterMs = Math.max(1, leaves(k)); // a reservation larger than the limit: never fits
    if (!ok && w) {
      // Until enough of the oldest buckets have left for this admission.
      let left = count;
      retryAfterMs = Math.max(1, leaves(k));
      for (const [b, c] of w.counts) {
        left -= c;
        if (left + amount <= rule.limit) {
          retryAfterMs = Math.max(1, leaves(b));
          break;
        }
      }
    }
    return {
      ok,
      retryAfterMs,
      current: { rule, limit: rule.limit, remaining: Math.max(0, rule.limit - count), resetMs: reset },
      apply: () => {
        const target = w ?? { counts: new Map<number, number>(), n: 0, expiresAt: 0 };
        target.counts.set(k, (target.counts.get(k) ?? 0) + amount);
        target.n += amount;
        target.expiresAt = Math.max(target.expiresAt, (k + nb + 1) * g);
        this.windows.set(rule.key, target);
        const state: RuleState = { rule, limit: rule.limit, remaining: rule.limit - count - amount, resetMs: leaves(lo ?? k) };
        if (rule.kind === 'tokens') state.at = now;
        return state;
      },
    };
  }

  /** GCRA with emission interval T = windowMs/limit and a burst of `limit`. */
  private checkGcra(rule: GcraRule, now: number): RuleCheck {
    const interval = rule.windowMs / rule.limit;
    const stored = this.gcras.get(rule.key);
    const tat = Math.max(stored && stored.expiresAt > now ? stored.tat : now, now);
    const newTat = tat + interval;
    const allowAt = newTat - rule.windowMs;
    const ok = now >= allowAt;
    const retryAfterMs = ok ? 0 : Math.max(1, Math.ceil(allowAt - now));
    return {
      ok,
      retryAfterMs,
      current: {
        rule,
        limit: rule.limit,
        remaining: gcraRemaining(rule.windowMs - (tat - now), interval),
        // Time until the full burst is available again (when refused: until conforming).
        resetMs: ok ? Math.ceil(tat - now) : retryAfterMs,
      },
      apply: () => {
        this.gcras.set(rule.key, { tat: newTat, expiresAt: newTat });
        return {
          rule,
          limit: rule.limit,
          remaining: gcraRemaining(rule.windowMs - (newTat - now), interval),
          resetMs: Math.ceil(newTat - now),
        };
      },
    };
  }

  private checkConcurrency(rule: ConcurrencyRule, leaseId: string, leaseTtlMs: number, now: number): RuleCheck {
    const set = this.liveLeaseSet(rule.key, now);
    const count = set?.leases.size ?? 0;
    const earliest = set ? minValue(set.leases) : undefined;
    const untilEarliest = earliest === undefined ? 0 : Math.max(1, Math.ceil(earliest - now));
    const ok = count < rule.limit;
    return {
      ok,
      retryAfterMs: ok ? 0 : Math.min(untilEarliest, CONCURRENCY_RETRY_CAP_MS),
      current: {
        rule,
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - count),
        resetMs: ok ? 0 : untilEarliest,
      },
      apply: () => {
        const target = set ?? { leases: new Map<string, number>(), expiresAt: 0 };
        target.leases.set(leaseId, now + leaseTtlMs);
        target.expiresAt = Math.max(target.expiresAt, now + 2 * leaseTtlMs);
        this.leaseSets.set(rule.key, target);
        const remaining = rule.limit - count - 1;
        const next = minValue(target.leases);
        return { rule, limit: rule.limit, remaining, resetMs: remaining > 0 ? 0 : Math.ceil(next - now) };
      },
    };
  }

  /** Usage is added by release(); admission only checks that some quota is left. */
  private checkQuota(rule: QuotaRule, now: number): RuleCheck {
    const q = this.liveQuota(rule.key, rule.windowMs, now);
    let usage = 0;
    let oldest: number | undefined;
    for (const [bucket, used] of q?.buckets ?? []) {
      usage += used;
      if (used > 0 && (oldest === undefined || bucket < oldest)) oldest = bucket;
    }
    const span = quotaBucketCount(rule.windowMs);
    const untilOldestLeaves = oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + span) * HOUR_MS - now));
    const ok = usage < rule.limit;
    const state: RuleState = {
      rule,
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - usage),
      resetMs: untilOldestLeaves,
    };
    return { ok, retryAfterMs: ok ? 0 : untilOldestLeaves, current: state, apply: () => state };
  }

  // ---- storage helpers (prune on access) --------------------------------------------

  /** The window's buckets from `first` on (older ones dropped), or undefined when none is left. */
  private liveWindow(key: string, first: number): WindowBuckets | undefined {
    const w = this.windows.get(key);
    if (!w) return undefined;
    for (const [b, c] of w.counts) {
      if (b >= first) break;
      w.counts.delete(b);
      w.n -= c;
    }
    if (w.counts.size === 0) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private liveLeaseSet(key: string, now: number): LeaseSet | undefined {
    const set = this.leaseSets.get(key);
    if (!set) return undefined;
    for (const [lease, expiry] of set.leases) if (expiry <= now) set.leases.delete(lease);
    if (set.leases.size === 0) {
      this.leaseSets.delete(key);
      return undefined;
    }
    return set;
  }

  private liveQuota(key: string, windowMs: number, now: number): QuotaBuckets | undefined {
    const q = this.quotas.get(key);
    if (!q) return undefined;
    const firstBucket = Math.floor(now / HOUR_MS) - quotaBucketCount(windowMs) + 1;
    for (const bucket of q.buckets.keys()) if (bucket < firstBucket) q.buckets.delete(bucket);
    if (q.buckets.size === 0 || q.expiresAt <= now) {
      this.quotas.delete(key);
      return undefined;
    }
    return q;
  }

  private addUsage(key: string, windowMs: number, rawAmount: number, now: number): void {
    // Redis stores usage with HINCRBY, which takes integers only.
    const amount = Math.round(rawAmount);
    if (amount === 0) return;
    const q = this.liveQuota(key, windowMs, now) ?? { buckets: new Map<number, number>(), expiresAt: 0 };
    const bucket = Math.floor(now / HOUR_MS);
    q.buckets.set(bucket, (q.buckets.get(bucket) ?? 0) + amount);
    q.expiresAt = now + windowMs + HOUR_MS;
    this.quotas.set(key, q);
  }

  /** INCRBY only when loaded: an absent balance is reloaded from the database instead. */
  private addToBalance(key: string, delta: bigint): void {
    const balance = this.balances.get(key);
    if (balance !== undefined) this.balances.set(key, balance + delta);
  }
}

// ---- shared helpers ------------------------------------------------------------------

/** Index of the refusing rule with the longest wait (the one that actually binds), or -1. */
function pickRefusal(checks: RuleCheck[]): number {
  let worst = -1;
  checks.forEach((c, i) => {
    if (!c.ok && (worst < 0 || c.retryAfterMs > checks[worst].retryAfterMs)) worst = i;
  });
  return worst;
}

/** Number of hour buckets covering a quota window. */
export function quotaBucketCount(windowMs: number): number {
  return Math.max(1, Math.ceil(windowMs / HOUR_MS));
}

/** Requests still allowed right now given the unused part of the GCRA window. */
function gcraRemaining(headroomMs: number, interval: number): number {
  // The epsilon absorbs float error from fractional intervals such as 1000/3.
  return Math.max(0, Math.floor(headroomMs / interval + 1e-9));
}

/** Smallest value of a non-empty map (a loop: spreading a large set could overflow the stack). */
function minValue(map: Map<string, number>): number {
  let min = Infinity;
  for (const v of map.values()) if (v < min) min = v;
  return min;
}

function assertNever(rule: never, index: number): never {
  throw new Error(`unknown limit rule kind at index ${index}: ${JSON.stringify(rule)}`);
}

// The limiter contract shared by the Redis and in-process implementations.
// All checks for one request happen in one call (one Redis round trip), atomically:
// either every rule admits and every mutation is applied, or nothing changes.

/**
 * At most `limit` admissions in any span of `windowMs`, counted in 60 fixed sub-buckets (O(1) state
 * whatever the limit; an admission may be refused up to one sub-bucket early).
 */
export interface WindowRule {
  kind: 'window';
  key: string;
  limit: number;
  /** Whole milliseconds (the Redis limiter passes it to PEXPIRE as written). */
  windowMs: number;
  /** Human text used in the 429 message, e.g. "tier free: 60 requests per minute". */
  label: string;
  /** Exposed as x-ratelimit-*-requests when true (the tightest such rule wins). */
  requests?: boolean;
}

/**
 * GCRA: a rate with a burst of `limit` (the global requests-per-second layer). Not a window: it may
 * admit up to twice `limit` within one `windowMs` span.
 */
export interface GcraRule {
  kind: 'gcra';
  key: string;
  limit: number;
  windowMs: number;
  label: string;
  /** Exposed as x-ratelimit-*-requests when true (the tightest such rule wins). */
  requests?: boolean;
}

/** Concurrency lease set: at most `limit` live leases; leases expire after leaseTtlMs. */
export interface ConcurrencyRule {
  kind: 'concurrency';
  key: string;
  limit: number;
  label: string;
}

/** Token quota over a sliding 24 h (hour buckets): usage is added after the reply. */
export interface QuotaRule {
  kind: 'quota';
  key: string;
  limit: number;
  windowMs: number;
  label: string;
}

/**
 * Tokens per window (TPM): a window rule (the same 60 sub-buckets) whose admission counts the
 * admission's token reservation (AdmitInput.tokens: the estimated input plus the largest output)
 * instead of 1, admitted while what the window holds plus the reservation stays within `limit`.
 * release() settles it to the tokens used (ReleaseInput.tokens), in the bucket it was counted in.
 */
export interface TokensRule {
  kind: 'tokens';
  key: string;
  limit: number;
  windowMs: number;
  label: string;
}

export type Rule = WindowRule | GcraRule | ConcurrencyRule | QuotaRule | TokensRule;

/** The rules whose usage can be read (Limiter.usage). */
export type UsageRule = Pick<ConcurrencyRule, 'kind' | 'key'> | Pick<WindowRule | TokensRule, 'kind' | 'key' | 'windowMs'>;

export interface RuleState {
  rule: Rule;
  limit: number;
  remaining: number;
  /** Milliseconds until the window has room again (0 when it has room now). */
  resetMs: number;
  /**
   * A tokens rule that admitted: the limiter's clock (epoch ms) when the reservation was counted,
   * which places its settlement in the same bucket (ReleaseInput.tokens).
   */
  at?: number;
}

/** The settlement of one tokens rule's reservation: `delta` (used - reserved) in the bucket of `at`. */
export interface TokenSettlement {
  key: string;
  windowMs: number;
  /** RuleState.at of the admission. */
  at: number;
  delta: number;
}

export interface AdmitInput {
  rules: Rule[];
  /** Unique per request; identifies its concurrency leases. */
  leaseId: string;
  leaseTtlMs: number;
  /**
   * Optional balance reservation in pico-USD, taken only when every rule admits. It is held as a
   * lease of its own (leaseId, amount; expiring after leaseTtlMs like the concurrency leases and
   * renewed with them): release() settles it; one whose instance died without releasing it is
   * returned to the balance by the next admission against that balance once it has expired.
   */
  reserve?: { key: string; amount: bigint };
  /**
   * Spending caps that the same reservation (reserve.amount) is taken against too, each one exactly
   * as the balance (a lease of its own, settled by release() through ReleaseInput.budgets). A
   * budget's counter holds minus what has been spent against it (so reserving and settling are the
   * balance's own arithmetic); the reservation is refused when spent + amount would exceed `cap`.
   * Only with `reserve`. An unloaded counter answers balance_unknown with its index (1-based).
   */
  budgets?: { key: string; cap: bigint }[];
  /**
   * Keys whose presence refuses the admission before anything is counted (a suspended account, a
   * revoked key). The operation that suspends or revokes writes them in Redis (lib/events.ts), so
   * every instance refuses at once, without waiting for its cached copy of the account to be
   * invalidated. The in-process limiter ignores them: with one instance the invalidation is
   * synchronous.
   */
  denyKeys?: string[];
  /**
   * Send now instead of with the event-loop turn's batch. A speculative admission races the upstream
   * call and its reply gates the first byte to the client, so it leaves before the upstream request
   * is written rather than after it (less streaming time to first byte;
   * docs/decisions/007-speculative-admission.md). Batching is kept for everything else. The gateway
   * asks for it only while its instance is quiet (lib/gateway/admission/lease.ts). The in-process
   * limiter ignores it.
   */
  urgent?: boolean;
  /** What each tokens rule counts (TokensRule): whole tokens, required with a tokens rule. */
  tokens?: number;
}

export type AdmitResult =
  /** `balance`: what is left after this reservation (pico-USD), when one was requested. */
  | { ok: true; states: RuleState[]; balance?: bigint }
  | { ok: false; reason: 'limit'; rule: Rule; retryAfterMs: number; states: RuleState[] }
  /** `index`: 0 the balance, j the j-th budget (whose `available` is its counter: minus the spend). */
  | { ok: false; reason: 'balance'; available: bigint; index?: number }
  /** The balance key (index 0, or absent) or the index-th budget counter is not loaded; call initBalance then admit again. */
  | { ok: false; reason: 'balance_unknown'; index?: number }
  /** `denyKeys[index]` exists. */
  | { ok: false; reason: 'denied'; index: number };

export interface ReleaseInput {
  leaseId: string;
  concurrencyKeys: string[];
  /**
   * Added to the balance key (reserved minus actual cost, in pico-USD; may be negative). With
   * `reserved` (the admission's reservation), the settlement is that of the reservation lease and
   * exact whatever happened to it: live, `delta` is added; already returned to the balance (it
   * expired, or the balance was reloaded from the database), only the cost (delta - reserved);
   * already settled, nothing. So a settlement may be sent again (replayed) without double counting.
   */
  settle?: { key: string; delta: bigint; reserved?: bigint };
  /**
   * The id of the charge this settlement makes (a batch line's fixed log id): the first settlement
   * of a charge id is applied and remembered (for a day and more); any later one, from another
   * admission of the same work (a line run again by the instance that took its batch over), charges
   * nothing and returns its reservations whole. Only with `settle`.
   */
  chargeId?: string;
  /** The settlements of the admission's budget reservations (AdmitInput.budgets), each as `settle` with `reserved`. */
  budgets?: { key: string; delta: bigint; reserved: bigint }[];
  /** Token usage added to quota rules after the reply. */
  usage?: { key: string; windowMs: number; amount: number }[];
  /** Token reservations (tokens rules) settled to what was used; a bucket that has left the window is left alone. */
  tokens?: TokenSettlement[];
  /**
   * Send now instead of with the event-loop turn's batch (as AdmitInput.urgent): a stream's release
   * goes out before its last bytes, so that nothing of it is left to do when the client's next
   * request arrives. The in-process limiter ignores it.
   */
  urgent?: boolean;
}

export interface Limiter {
  admit(input: AdmitInput): Promise<AdmitResult>;
  release(input: ReleaseInput): Promise<void>;
  /**
   * Extend live leases (long streams): the concurrency leases and, when given, the balance
   * reservation of the lease (AdmitInput.reserve: its key and amount).
   */
  renew(concurrencyKeys: string[], leaseId: string, leaseTtlMs: number, reservation?: { key: string; amount: bigint }): Promise<void>;
  /**
   * Set the balance only if it is not loaded yet (SET NX). `credits`: the credit ledger entries still
   * pending (not yet applied, see applyCredit) that `amount` includes, read with it: when the
   * balance is set, they are marked applied, so applying them later does not count them twice.
   * `included`: every credit entry `amount` may include whose application could race with this
   * load (default `credits`); a credit applied while the balance was not loaded and not in it is
   * added to the balance as it is set. `ttlMs`: the loaded value expires after it (a key's budget
   * counter, which is loaded again from the database when needed); balances never expire.
   */
  initBalance(key: string, amount: bigint, credits?: string[], included?: string[], ttlMs?: number): Promise<void>;
  /** Add to a loaded balance; no-op if not loaded. Credits use applyCredit (idempotent). */
  adjustBalance(key: string, delta: bigint): Promise<void>;
  /**
   * Applies the credit ledger entry `entryId` to a loaded balance once (a marker per entry makes a
   * second call a no-op; an unloaded balance is left to load from the database, which has it).
   * True when it is applied to the balance the gateway admits against (now or before); false when
   * that store could not be reached (the caller keeps the entry pending and tries again).
   */
  applyCredit(entryId: string, key: string, delta: bigint): Promise<boolean>;
  /** Drop a loaded balance so it is reloaded from the database. */
  forgetBalance(key: string): Promise<void>;
  /** Which of these deny keys (AdmitInput.denyKeys) exists first, or -1: for calls that admit nothing. */
  denied(keys: string[]): Promise<number>;
  /**
   * What each rule holds now, read without changing anything (the console, off the request path):
   * a concurrency rule its live leases, a window or tokens rule what its window counts.
   */
  usage(rules: readonly UsageRule[]): Promise<number[]>;
  close(): Promise<void>;
}

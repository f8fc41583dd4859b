import type { GatewayConfig } from '@/lib/config';
import { singleton } from '@/lib/singleton';

// Circuit breaker: a channel that keeps failing is skipped for a cool-down, then tried again.
interface BreakerState {
  failures: number;
  openUntil: number;
  /** Failures of the streak per account whose requests failed (the first MAX_STREAK_ACCOUNTS accounts). */
  byAccount: Map<string, number>;
  /**
   * The streak's failures as an automatic disable counts them: each account's at most
   * `auto_disable_after / auto_disable_min_accounts`, so that one account's requests (an input the
   * upstream chokes on, a prompt that times out) can never disable a channel for every tenant.
   */
  counted: number;
}

/** Accounts tracked per streak; failures of accounts beyond them count in full (many accounts failing is the channel). */
const MAX_STREAK_ACCOUNTS = 16;

const breakers = () => singleton('breakers', () => new Map<string, BreakerState>());

export function channelAvailable(name: string, now = Date.now()): boolean {
  const state = breakers().get(name);
  return !state || state.openUntil <= now;
}

/** A channel's answer: `ok` ends its failure streak; a failure counts, with the account whose request failed (when one did). */
export function recordChannelResult(name: string, ok: boolean, cfg: GatewayConfig, account?: string): void {
  const map = breakers();
  if (ok) {
    map.delete(name);
    return;
  }
  const state = map.get(name) ?? { failures: 0, openUntil: 0, byAccount: new Map<string, number>(), counted: 0 };
  state.failures++;
  const cb = cfg.circuitBreaker;
  const perAccount = cb.autoDisableAfter ? Math.ceil(cb.autoDisableAfter / cb.autoDisableMinAccounts) : Infinity;
  const seen = account === undefined ? undefined : state.byAccount.get(account);
  if (account !== undefined && (seen !== undefined || state.byAccount.size < MAX_STREAK_ACCOUNTS)) {
    state.byAccount.set(account, (seen ?? 0) + 1);
    if ((seen ?? 0) < perAccount) state.counted++;
  } else state.counted++;
  // Half-open after a cool-down: a single failure re-opens it at once.
  if (state.failures >= cb.failures) state.openUntil = Date.now() + cb.cooldownMs;
  map.set(name, state);
}

/** Every channel with a failure on record, for the console and the fleet view (lib/channels/overrides.ts). */
export function breakerSnapshot(): Record<string, { failures: number; openUntil: number; counted: number; accounts: number }> {
  const out: Record<string, { failures: number; openUntil: number; counted: number; accounts: number }> = {};
  for (const [name, b] of breakers()) out[name] = { failures: b.failures, openUntil: b.openUntil, counted: b.counted, accounts: b.byAccount.size };
  return out;
}

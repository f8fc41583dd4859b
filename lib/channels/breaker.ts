import type { GatewayConfig } from '@/lib/config';
import { singleton } from '@/lib/singleton';

// Circuit breaker: a channel that keeps failing is skipped for a cool-down, then tried again.
interface BreakerState {
  failures: number;
  openUntil: number;
  /**
   * Distinct accounts whose requests make up the failure streak (the first few): an automatic
   * disable acts for every tenant, so it needs failures of more than one (lib/channels/overrides.ts).
   */
  accounts: string[];
}

/** Accounts remembered per streak: enough for any `auto_disable_min_accounts` worth setting. */
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
  const state = map.get(name) ?? { failures: 0, openUntil: 0, accounts: [] };
  state.failures++;
  if (account !== undefined && state.accounts.length < MAX_STREAK_ACCOUNTS && !state.accounts.includes(account)) state.accounts.push(account);
  // Half-open after a cool-down: a single failure re-opens it at once.
  if (state.failures >= cfg.circuitBreaker.failures) state.openUntil = Date.now() + cfg.circuitBreaker.cooldownMs;
  map.set(name, state);
}

/** Every channel with a failure on record (the accounts of its streak as a count), for the console and the fleet view (lib/channels/overrides.ts). */
export function breakerSnapshot(): Record<string, { failures: number; openUntil: number; accounts: number }> {
  const out: Record<string, { failures: number; openUntil: number; accounts: number }> = {};
  for (const [name, b] of breakers()) out[name] = { failures: b.failures, openUntil: b.openUntil, accounts: b.accounts.length };
  return out;
}

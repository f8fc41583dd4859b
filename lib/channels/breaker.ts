import type { GatewayConfig } from '@/lib/config';
import { singleton } from '@/lib/singleton';

// Circuit breaker: a channel that keeps failing is skipped for a cool-down, then tried again.
interface BreakerState {
  failures: number;
  openUntil: number;
}
const breakers = () => singleton('breakers', () => new Map<string, BreakerState>());

export function channelAvailable(name: string, now = Date.now()): boolean {
  const state = breakers().get(name);
  return !state || state.openUntil <= now;
}

export function recordChannelResult(name: string, ok: boolean, cfg: GatewayConfig): void {
  const map = breakers();
  if (ok) {
    map.delete(name);
    return;
  }
  const state = map.get(name) ?? { failures: 0, openUntil: 0 };
  state.failures++;
  // Half-open after a cool-down: a single failure re-opens it at once.
  if (state.failures >= cfg.circuitBreaker.failures) state.openUntil = Date.now() + cfg.circuitBreaker.cooldownMs;
  map.set(name, state);
}

/** Every channel with a failure on record, for the console (lib/channels/overrides.ts). */
export function breakerSnapshot(): Record<string, BreakerState> {
  return Object.fromEntries(breakers());
}

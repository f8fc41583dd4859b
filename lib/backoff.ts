// The one shape of retry back-off in the gateway: base × factor^(n−1), capped, optionally with
// jitter. Every retry loop (alert and job webhooks, the job engine, log export, the request-log
// writer, channel-health webhooks) states its own numbers here instead of writing the formula again.

export interface Backoff {
  /** The delay before the first retry (ms). */
  baseMs: number;
  /** Growth per failure (2: doubling, 4: quadrupling). */
  factor: number;
  /** The longest delay (ms); Infinity for none. */
  maxMs: number;
  /** Up to this fraction added at random (0.1: +0–10 %); 0 or unset for none. */
  jitter?: number;
}

/**
 * The delay before the retry that follows failure number `failures` (1-based: the first failure
 * waits `baseMs`), capped at `maxMs`, then the jitter (`random` in [0, 1), injectable for tests).
 */
export function backoffDelayMs(failures: number, b: Backoff, random: number = Math.random()): number {
  const delay = Math.min(b.baseMs * b.factor ** Math.max(0, failures - 1), b.maxMs);
  return b.jitter ? Math.round(delay * (1 + b.jitter * random)) : delay;
}

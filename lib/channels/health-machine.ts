import type { HealthThresholds } from '@/lib/config';

// The channel health state machine, pure (no clock, no I/O): lib/channels/health.ts feeds it the
// sliding window's counts and the probes' results, and shares what it decides across instances.
//
//   healthy ──rate ≥ degraded or latency ≥ limit──▶ degraded ──rate ≥ failed──▶ failed
//      ▲  ◀──────────── window back under ───────────┘                          │ probe passes
//      └──────── recover_after consecutive passing probes ──── recovering ◀─────┘
//                                                      (a failed probe or rate ≥ failed: failed)
//
// A state needs `min_requests` counted attempts in its window before the error rate can move it:
// one error never does. Upstream 429/529 are not counted at all, and an upstream 4xx the caller
// caused counts as an answer (lib/gateway/context.ts records the channel's faults and its answers).

export type HealthState = 'healthy' | 'degraded' | 'failed' | 'recovering';

export const HEALTH_STATES: readonly HealthState[] = ['healthy', 'degraded', 'recovering', 'failed'];

export const DEFAULT_THRESHOLDS: HealthThresholds = {
  windowMs: 60_000,
  minRequests: 5,
  degradedErrorRate: 0.2,
  failedErrorRate: 0.5,
  degradedLatencyMs: 30_000,
  probeIntervalMs: 15_000,
  recoverAfter: 3,
  recoveringShare: 0.1,
};

/** Why a state was entered: a code the console words in its language, with its figures. */
export interface HealthReason {
  code: 'error_rate' | 'latency' | 'window_clear' | 'probe_passed' | 'probes_passed' | 'probe_failed';
  /** Counted attempts in the window (error_rate, latency, window_clear). */
  requests?: number;
  /** Failed share of them, 0–1. */
  errorRate?: number;
  /** Mean latency of the good answers (ms). */
  latencyMs?: number;
  /** Consecutive passing probes (probe_passed, probes_passed). */
  probes?: number;
  /** The failed probe's status line or error class. */
  detail?: string;
}

export interface ChannelHealth {
  state: HealthState;
  /** When this state was entered (epoch ms). */
  since: number;
  reason: HealthReason | null;
  /** Bumped on every change: a change is written only over the version it was computed from. */
  v: number;
  /** Consecutive passing probes since the channel failed. */
  probeSuccesses: number;
  /** Window buckets that started before this are not counted (the failures that made it fail). */
  windowFrom: number;
}

export const INITIAL_HEALTH: ChannelHealth = { state: 'healthy', since: 0, reason: null, v: 0, probeSuccesses: 0, windowFrom: 0 };

export interface Counts {
  ok: number;
  fail: number;
  /** Sum of the good answers' latencies (ms). */
  latencyMs: number;
}

/** Window buckets: about twelve per window, never shorter than 250 ms. */
export function bucketMs(t: HealthThresholds): number {
  return Math.max(250, Math.ceil(t.windowMs / 12));
}

/** The bucket an instant falls in (its start). */
export function bucketOf(now: number, t: HealthThresholds): number {
  const size = bucketMs(t);
  return Math.floor(now / size) * size;
}

/** The sum of the buckets inside the window ending now and not before `from`. */
export function windowCounts(buckets: ReadonlyMap<number, Counts>, now: number, t: HealthThresholds, from: number): Counts {
  const out: Counts = { ok: 0, fail: 0, latencyMs: 0 };
  for (const [start, c] of buckets) {
    // A bucket counts while any of it is inside the window, and only if it began at or after `from`.
    if (start + bucketMs(t) <= now - t.windowMs || start < from) continue;
    out.ok += c.ok;
    out.fail += c.fail;
    out.latencyMs += c.latencyMs;
  }
  return out;
}

function change(h: ChannelHealth, state: HealthState, reason: HealthReason, now: number, extra: Partial<ChannelHealth> = {}): ChannelHealth {
  return { ...h, state, since: now, reason, v: h.v + 1, ...extra };
}

/** The state the window's counts call for, or null when it stays (failed channels move only by probes). */
export function evaluateWindow(h: ChannelHealth, w: Counts, t: HealthThresholds, now: number): ChannelHealth | null {
  if (h.state === 'failed') return null;
  const requests = w.ok + w.fail;
  const errorRate = requests ? w.fail / requests : 0;
  const latencyMs = w.ok ? Math.round(w.latencyMs / w.ok) : 0;
  const judged = requests >= t.minRequests;
  if (judged && errorRate >= t.failedErrorRate) return change(h, 'failed', { code: 'error_rate', requests, errorRate }, now, { probeSuccesses: 0 });
  if (h.state === 'recovering') return null;
  const slow = w.ok >= t.minRequests && latencyMs >= t.degradedLatencyMs;
  if (h.state === 'healthy') {
    if (judged && errorRate >= t.degradedErrorRate) return change(h, 'degraded', { code: 'error_rate', requests, errorRate }, now);
    if (slow) return change(h, 'degraded', { code: 'latency', requests, latencyMs }, now);
    return null;
  }
  // Degraded: healthy again once the window (which slides its bad attempts away) is under both thresholds.
  if ((judged && errorRate >= t.degradedErrorRate) || slow) return null;
  return change(h, 'healthy', { code: 'window_clear', requests, errorRate, latencyMs }, now);
}

/**
 * A probe's verdict on a failed or recovering channel (`null` result: limited, 429/529, which says
 * nothing of its health). The first pass makes it recovering; `recover_after` in a row, healthy.
 */
export function applyProbe(h: ChannelHealth, ok: boolean | null, detail: string, t: HealthThresholds, now: number): ChannelHealth | null {
  if (ok === null || (h.state !== 'failed' && h.state !== 'recovering')) return null;
  if (!ok) {
    if (h.state === 'failed') return h.probeSuccesses === 0 ? null : { ...h, probeSuccesses: 0, v: h.v + 1 };
    return change(h, 'failed', { code: 'probe_failed', detail }, now, { probeSuccesses: 0 });
  }
  const probes = h.probeSuccesses + 1;
  if (probes >= t.recoverAfter) return change(h, 'healthy', { code: 'probes_passed', probes }, now, { probeSuccesses: 0, windowFrom: now });
  if (h.state === 'failed') return change(h, 'recovering', { code: 'probe_passed', probes }, now, { probeSuccesses: probes, windowFrom: now });
  return { ...h, probeSuccesses: probes, v: h.v + 1 };
}

/** Routing rank: healthy first, then degraded, then recovering, failed last (router.ts). */
export function healthRank(state: HealthState): number {
  return state === 'healthy' ? 0 : state === 'degraded' ? 1 : state === 'recovering' ? 2 : 3;
}

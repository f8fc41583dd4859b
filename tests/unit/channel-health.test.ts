// The channel health state machine (lib/channels/health-machine.ts): the sliding window, the
// thresholds, recovery after consecutive passing probes; and the router's order by health.
import { describe, it, expect, afterEach } from 'vitest';
import type { ChannelInfo, HealthThresholds } from '@/lib/config';
import {
  applyProbe,
  bucketOf,
  DEFAULT_THRESHOLDS,
  evaluateWindow,
  INITIAL_HEALTH,
  windowCounts,
  type ChannelHealth,
  type Counts,
} from '@/lib/channels/health-machine';
import { setHealthForTest } from '@/lib/channels/health';
import { orderChannels } from '@/lib/gateway/router';

const t: HealthThresholds = {
  ...DEFAULT_THRESHOLDS,
  windowMs: 12_000,
  minRequests: 4,
  degradedErrorRate: 0.25,
  failedErrorRate: 0.6,
  degradedLatencyMs: 5000,
  recoverAfter: 3,
};

/** A window of buckets filled with attempts at given instants. */
function window(attempts: { at: number; ok: boolean; ms?: number }[]): Map<number, Counts> {
  const w = new Map<number, Counts>();
  for (const a of attempts) {
    const b = bucketOf(a.at, t);
    const c = w.get(b) ?? { ok: 0, fail: 0, latencyMs: 0 };
    if (a.ok) {
      c.ok++;
      c.latencyMs += a.ms ?? 100;
    } else c.fail++;
    w.set(b, c);
  }
  return w;
}

const T0 = 1_800_000_000_000;
const step = (h: ChannelHealth, attempts: { at: number; ok: boolean; ms?: number }[], now: number) =>
  evaluateWindow(h, windowCounts(window(attempts), now, t, h.windowFrom), t, now) ?? h;

describe('channel health state machine', () => {
  it('one error (or three) never moves a healthy channel: min_requests counted attempts are needed', () => {
    expect(step(INITIAL_HEALTH, [{ at: T0, ok: false }], T0 + 10).state).toBe('healthy');
    expect(
      step(
        INITIAL_HEALTH,
        [0, 1, 2].map((i) => ({ at: T0 + i, ok: false })),
        T0 + 10,
      ).state,
    ).toBe('healthy');
    // Four attempts, all failed: straight to failed (rate 100% ≥ 60%).
    const failed = step(
      INITIAL_HEALTH,
      [0, 1, 2, 3].map((i) => ({ at: T0 + i, ok: false })),
      T0 + 10,
    );
    expect(failed).toMatchObject({ state: 'failed', v: 1, reason: { code: 'error_rate', requests: 4, errorRate: 1 } });
  });

  it('healthy → degraded at the degraded rate, degraded → failed at the failed rate, over the same window', () => {
    const attempts = [true, true, false, true, true, false, true, true].map((ok, i) => ({ at: T0 + i * 100, ok }));
    const degraded = step(INITIAL_HEALTH, attempts, T0 + 1000);
    expect(degraded).toMatchObject({ state: 'degraded', reason: { code: 'error_rate', requests: 8, errorRate: 0.25 } });
    // Under 60% stays degraded; at 60% (more failures in the window) it has failed.
    expect(step(degraded, [...attempts, { at: T0 + 1100, ok: false }], T0 + 1200)).toBe(degraded);
    const more = [...attempts, ...[0, 1, 2, 3, 4, 5, 6].map((i) => ({ at: T0 + 1100 + i, ok: false }))];
    expect(step(degraded, more, T0 + 1200)).toMatchObject({ state: 'failed', v: degraded.v + 1, reason: { code: 'error_rate', requests: 15 } });
  });

  it('slow good answers degrade too; a degraded channel is healthy again once its bad attempts slide out of the window', () => {
    const slow = [0, 1, 2, 3].map((i) => ({ at: T0 + i, ok: true, ms: 6000 }));
    const degraded = step(INITIAL_HEALTH, slow, T0 + 10);
    expect(degraded).toMatchObject({ state: 'degraded', reason: { code: 'latency', latencyMs: 6000 } });
    // Still inside the window: unchanged. A window later: healthy.
    expect(step(degraded, slow, T0 + 5000)).toBe(degraded);
    expect(step(degraded, slow, T0 + t.windowMs + 2000)).toMatchObject({ state: 'healthy', reason: { code: 'window_clear' } });
  });

  it('upstream 429/529 and client errors are not in the window: a burst of them leaves the channel healthy', () => {
    // recordHealth(channel, null, …) adds no count; only the channel's own faults and good answers are counted.
    const w = windowCounts(window([]), T0, t, 0);
    expect(evaluateWindow(INITIAL_HEALTH, w, t, T0)).toBeNull();
  });

  it('a failed channel moves only by probes: the first pass makes it recovering, recover_after in a row healthy', () => {
    const failed: ChannelHealth = { ...INITIAL_HEALTH, state: 'failed', v: 3, since: T0 };
    // Traffic (or its absence) does not move a failed channel.
    expect(evaluateWindow(failed, { ok: 50, fail: 0, latencyMs: 50 }, t, T0 + 1)).toBeNull();
    // A failing probe keeps it failed; a limited one (429) says nothing.
    expect(applyProbe(failed, false, 'HTTP 500', t, T0 + 2)).toBeNull();
    expect(applyProbe(failed, null, 'HTTP 429', t, T0 + 2)).toBeNull();
    const r1 = applyProbe(failed, true, 'ok', t, T0 + 3)!;
    expect(r1).toMatchObject({ state: 'recovering', probeSuccesses: 1, v: 4, windowFrom: T0 + 3, reason: { code: 'probe_passed', probes: 1 } });
    const r2 = applyProbe(r1, true, 'ok', t, T0 + 4)!;
    expect(r2).toMatchObject({ state: 'recovering', probeSuccesses: 2, since: T0 + 3 });
    const healthy = applyProbe(r2, true, 'ok', t, T0 + 5)!;
    expect(healthy).toMatchObject({ state: 'healthy', probeSuccesses: 0, since: T0 + 5, reason: { code: 'probes_passed', probes: 3 } });
  });

  it('a failing probe while recovering fails it again and restarts the count; the old failures do not count after recovery', () => {
    const failed: ChannelHealth = { ...INITIAL_HEALTH, state: 'failed', v: 1, since: T0 };
    const r1 = applyProbe(failed, true, 'ok', t, T0 + 1000)!;
    const again = applyProbe(r1, false, 'HTTP 503', t, T0 + 2000)!;
    expect(again).toMatchObject({ state: 'failed', probeSuccesses: 0, reason: { code: 'probe_failed', detail: 'HTTP 503' } });
    // Recovered at T0+5000: the window's failures from before it are not counted (windowFrom).
    let h = applyProbe(again, true, 'ok', t, T0 + 3000)!;
    h = applyProbe(h, true, 'ok', t, T0 + 4000)!;
    h = applyProbe(h, true, 'ok', t, T0 + 5000)!;
    expect(h.state).toBe('healthy');
    const old = [0, 1, 2, 3, 4, 5].map((i) => ({ at: T0 + i, ok: false }));
    expect(step(h, old, T0 + 6000)).toBe(h);
    // New failures after it do.
    const fresh = [0, 1, 2, 3].map((i) => ({ at: T0 + 7000 + i, ok: false }));
    expect(step(h, [...old, ...fresh], T0 + 8000).state).toBe('failed');
  });
});

describe('routing by health', () => {
  const channel = (name: string, priority = 1): ChannelInfo => ({
    name,
    protocol: 'openai',
    baseUrl: 'http://127.0.0.1:1',
    apiKey: 'k',
    models: ['m'],
    priority,
    weight: 1,
    timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000 },
    health: { ...DEFAULT_THRESHOLDS, recoveringShare: 0 },
  });
  const first = () => () => 0;
  afterEach(() => ['h-a', 'h-b', 'h-c', 'h-d'].forEach((n) => setHealthForTest(n, null)));

  it('healthy first, then degraded, then recovering; failed ones only when nothing else is left', () => {
    const list = [channel('h-a', 9), channel('h-b', 5), channel('h-c', 1), channel('h-d', 0)];
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['h-a', 'h-b', 'h-c', 'h-d']);
    setHealthForTest('h-a', 'failed');
    setHealthForTest('h-b', 'recovering');
    setHealthForTest('h-c', 'degraded');
    // Health comes before priority.
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['h-d', 'h-c', 'h-b']);
    setHealthForTest('h-b', 'failed');
    setHealthForTest('h-c', 'failed');
    setHealthForTest('h-d', 'failed');
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['h-a', 'h-b', 'h-c', 'h-d']);
  });

  it('a recovering channel goes first for its share of requests', () => {
    const list = [channel('h-a', 9), { ...channel('h-b', 0), health: { ...DEFAULT_THRESHOLDS, recoveringShare: 1 } }];
    setHealthForTest('h-b', 'recovering');
    expect(orderChannels(list, Date.now(), first()).map((c) => c.name)).toEqual(['h-b', 'h-a']);
  });
});

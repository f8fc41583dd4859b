// The one retry back-off shape (lib/backoff.ts) with the numbers each of its callers uses.
import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '@/lib/backoff';

describe('retry back-off', () => {
  it('waits the base after the first failure, then grows by the factor up to the cap', () => {
    const logExport = { baseMs: 1000, factor: 2, maxMs: 5 * 60_000 };
    expect([1, 2, 3, 4].map((n) => backoffDelayMs(n, logExport))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelayMs(9, logExport)).toBe(256_000);
    expect(backoffDelayMs(10, logExport)).toBe(300_000);
    expect(backoffDelayMs(5000, logExport)).toBe(300_000);
  });

  it('the job engine: base × 4 per retry, capped at a minute', () => {
    const jobs = { baseMs: 5000, factor: 4, maxMs: 60_000 };
    expect([1, 2, 3].map((n) => backoffDelayMs(n, jobs))).toEqual([5000, 20_000, 60_000]);
  });

  it('the request-log writer: 0.5 s doubling to 30 s, as before (250 × 2^min(failures, 7), capped)', () => {
    const writer = { baseMs: 500, factor: 2, maxMs: 30_000 };
    for (let f = 1; f <= 40; f++) expect(backoffDelayMs(f, writer)).toBe(Math.min(30_000, 250 * 2 ** Math.min(f, 7)));
  });

  it('jitter adds up to its fraction, rounded; none without it', () => {
    const alerts = { baseMs: 30_000, factor: 4, maxMs: 6 * 3600_000, jitter: 0.1 };
    expect(backoffDelayMs(3, alerts, 0)).toBe(480_000);
    expect(backoffDelayMs(3, alerts, 1)).toBe(528_000);
    expect(backoffDelayMs(20, alerts, 0.5)).toBe(Math.round(6 * 3600_000 * 1.05));
    expect(backoffDelayMs(2, { baseMs: 1000, factor: 4, maxMs: Infinity }, 0.99)).toBe(4000);
  });
});

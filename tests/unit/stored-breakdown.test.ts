// What a request's log row stores of its price breakdown, and what GET /api/logs/{id} shows of it
// (lib/pricing/breakdown.ts, docs/decisions/043): lines, per-call lines and adjustments that add up
// to the charge exactly, read back only when well-formed, shown in USD and CNY.
import { describe, expect, it } from 'vitest';
import { breakdownTotal, breakdownView, parseStoredBreakdown, priceOf, storedBreakdown, type PriceModel } from '@/lib/pricing/breakdown';
import { usdToPico } from '@/lib/money';

const perM = (usd: string) => usdToPico(usd) / 1_000_000n;

const sonnet: PriceModel = {
  base: { input: perM('3'), output: perM('15'), cache_read: perM('0.3'), cache_write_5m: perM('3.75') },
  serviceTiers: { batch: 5_000 },
};

describe('the breakdown a log row stores (docs/decisions/043)', () => {
  it('stores lines, per-call lines and adjustments that sum exactly to the charge', () => {
    const b = priceOf(sonnet, { input: 3, output: 1 }, 'batch'); // 3 x 3 + 15 = 24 micro-USD, x0.5
    const s = storedBreakdown(
      b,
      [{ tool: 'web_search', calls: 2, rate: usdToPico('0.01'), cost: 2n * usdToPico('0.01') }],
      [{ kind: 'batch_discount', detail: '50', amount: -(b.costUsd / 2n) }],
    );
    expect(s).toEqual({
      t: 'base',
      l: [
        ['input', 3, '3000000', '9000000'],
        ['output', 1, '15000000', '15000000'],
      ],
      k: [['web_search', 2, '10000000000', '20000000000']],
      a: [
        ['service_tier', 'batch x0.5', '-12000000'],
        ['batch_discount', '50', '-6000000'],
      ],
    });
    expect(breakdownTotal(s)).toBe(b.costUsd / 2n + 2n * usdToPico('0.01'));
    expect(parseStoredBreakdown(JSON.parse(JSON.stringify(s)))).toEqual(s);
  });

  it('keeps the rounding of a multiplier in its adjustment, so the sum stays exact', () => {
    const b = priceOf({ base: { input: 3n }, serviceTiers: { batch: 5_000 } }, { input: 1 }, 'batch');
    const s = storedBreakdown(b, [], []);
    expect(s.a).toEqual([['service_tier', 'batch x0.5', '-1']]);
    expect(breakdownTotal(s)).toBe(b.costUsd);
  });

  it('lists unpriced classes, keeps the class whose rate billed one, and refuses what is not a stored breakdown', () => {
    const s = storedBreakdown(priceOf(sonnet, { input: 10, audio_input: 5 }), [], []);
    expect(s.u).toEqual(['audio_input']);
    expect(s.l[1]).toEqual(['audio_input', 5, '3000000', '15000000', 'input']); // decision 042: billed at the input rate
    expect(parseStoredBreakdown(JSON.parse(JSON.stringify(s)))).toEqual(s);
    expect(breakdownView(s, 7_200_000_000n).lines[1]).toMatchObject({ class: 'audio_input', priced_as: 'input', cost_usd: '0.000015' });
    expect(parseStoredBreakdown(null)).toBeNull();
    expect(parseStoredBreakdown({ t: 'base', l: [['input', 1, '1.5', '1']] })).toBeNull();
    expect(parseStoredBreakdown({ t: 'other', l: [] })).toBeNull();
  });

  it('shows rates per million and costs in USD and CNY as exact decimal text', () => {
    const v = breakdownView(storedBreakdown(priceOf(sonnet, { input: 1000, cache_read: 10 }), [], []), 7_200_000_000n);
    expect(v.lines[0]).toEqual({
      class: 'input',
      priced_as: null,
      tokens: 1000,
      rate_usd_per_million: '3',
      rate_cny_per_million: '21.6',
      cost_usd: '0.003',
      cost_cny: '0.0216',
    });
    expect(v.lines[1]).toMatchObject({ class: 'cache_read', rate_usd_per_million: '0.3', cost_usd: '0.000003' });
    expect(v.total_usd).toBe('0.003003');
    expect(v.total_cny).toBe('0.0216216');
  });
});

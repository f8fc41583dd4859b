import { describe, expect, it } from 'vitest';
import { breakdownTotal, breakdownView, parseStoredBreakdown, priceOf, storedBreakdown, type PriceModel } from '@/lib/billing/breakdown';
import { usdToPico } from '@/lib/billing/money';

// USD per million tokens -> pico-USD per token.
const perM = (usd: string) => usdToPico(usd) / 1_000_000n;

// Anthropic-style list: input 3, output 15, cache read 0.30, 5m write 3.75, 1h write 6, long context above 200k at 6/22.50.
const sonnet: PriceModel = {
  base: {
    input: perM('3'),
    output: perM('15'),
    cache_read: perM('0.3'),
    cache_write_5m: perM('3.75'),
    cache_write_1h: perM('6'),
    web_search: usdToPico('0.01'),
  },
  longContext: { threshold: 200_000, prices: { input: perM('6'), output: perM('22.5') } },
  serviceTiers: { batch: 5_000, priority: 20_000 },
};

describe('priceOf', () => {
  it('prices each class at its own rate, exactly', () => {
    const b = priceOf(sonnet, { input: 1000, output: 500, cache_read: 2000, cache_write_5m: 100, cache_write_1h: 10, web_search: 2 });
    // 1000*3 + 500*15 + 2000*0.3 + 100*3.75 + 10*6 = 11535 micro-USD; + 2 searches * 0.01 USD
    expect(b.costUsd).toBe(11_535_000_000n + 20_000_000_000n);
    expect(b.tier).toBe('base');
    expect(b.unpriced).toEqual([]);
    expect(b.lines.map((l) => l.class)).toEqual(['input', 'output', 'cache_read', 'cache_write_5m', 'cache_write_1h', 'web_search']);
  });

  it('crosses the long-context tier on prompt size, falling back to base prices for classes the tier leaves out', () => {
    const b = priceOf(sonnet, { input: 150_000, cache_read: 60_000, output: 10 });
    expect(b.tier).toBe('long_context');
    expect(b.costUsd).toBe(150_000n * perM('6') + 60_000n * perM('0.3') + 10n * perM('22.5'));
    expect(priceOf(sonnet, { input: 200_000, output: 10 }).tier).toBe('base');
  });

  it('reports a class with no price as unpriced instead of charging zero for it silently', () => {
    const b = priceOf(sonnet, { input: 10, audio_input: 5 });
    expect(b.unpriced).toEqual(['audio_input']);
    expect(b.costUsd).toBe(10n * perM('3'));
  });

  it('prices reasoning at the output rate unless priced apart', () => {
    expect(priceOf(sonnet, { reasoning: 100 }).costUsd).toBe(100n * perM('15'));
    expect(priceOf({ base: { output: perM('15'), reasoning: perM('10') } }, { reasoning: 100 }).costUsd).toBe(100n * perM('10'));
  });

  it('applies a service-tier multiplier once on the total, rounding half up', () => {
    expect(priceOf(sonnet, { input: 1 }, 'batch').costUsd).toBe(1_500_000n);
    expect(priceOf(sonnet, { input: 1 }, 'priority').multiplierBp).toBe(20_000);
    expect(priceOf(sonnet, { input: 1 }, 'flex').costUsd).toBe(3_000_000n);
    expect(priceOf({ base: { input: 3n }, serviceTiers: { batch: 5_000 } }, { input: 1 }, 'batch').costUsd).toBe(2n);
  });
});

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

  it('lists unpriced classes and refuses what is not a stored breakdown', () => {
    expect(storedBreakdown(priceOf(sonnet, { input: 10, audio_input: 5 }), [], []).u).toEqual(['audio_input']);
    expect(parseStoredBreakdown(null)).toBeNull();
    expect(parseStoredBreakdown({ t: 'base', l: [['input', 1, '1.5', '1']] })).toBeNull();
    expect(parseStoredBreakdown({ t: 'other', l: [] })).toBeNull();
  });

  it('shows rates per million and costs in USD and CNY as exact decimal text', () => {
    const v = breakdownView(storedBreakdown(priceOf(sonnet, { input: 1000, cache_read: 10 }), [], []), 7_200_000_000n);
    expect(v.lines[0]).toEqual({
      class: 'input',
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

describe('costOf and maxCostOf read the price list', () => {
  it('prices a long-context request at the tier and reserves at least that much', async () => {
    const { costOf, maxCostOf, noUsage } = await import('@/lib/billing/cost');
    const { modelInfo } = await import('../support/model-info');
    const m = modelInfo({ priceModel: sonnet });
    const usage = { ...noUsage(), promptTokens: 250_000, completionTokens: 100 };
    expect(costOf(m, usage)).toBe(250_000n * perM('6') + 100n * perM('22.5'));
    expect(costOf(m, { ...noUsage(), promptTokens: 1000, cacheReadTokens: 10 })).toBe(1000n * perM('3') + 10n * perM('0.3'));
    expect(maxCostOf(m, 250_000, 100)).toBeGreaterThanOrEqual(costOf(m, usage));
  });
});

import { describe, expect, it } from 'vitest';
import { breakdownJson, priceOf, type PriceModel } from '@/lib/pricing/breakdown';
import { usdToPico } from '@/lib/money';

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

  it('reports a class with no price as unpriced, billing a share of a priced class at that class rate instead of zero', () => {
    const b = priceOf(sonnet, { input: 10, audio_input: 5, image_output: 2 });
    expect(b.unpriced).toEqual(['audio_input', 'image_output']);
    expect(b.costUsd).toBe(15n * perM('3') + 2n * perM('15'));
    expect(b.lines.find((l) => l.class === 'audio_input')).toEqual({
      class: 'audio_input',
      pricedAs: 'input',
      count: 5,
      rate: perM('3'),
      cost: 5n * perM('3'),
    });
    expect(breakdownJson(b, 7_200_000_000n).lines[1]).toMatchObject({ class: 'audio_input', priced_as: 'input', count: 5 });
    // A 1-hour write without a price of its own: at the 5-minute rate, and said so.
    const w = priceOf({ base: { cache_write_5m: perM('3.75') } }, { cache_write_1h: 4 });
    expect(w.unpriced).toEqual(['cache_write_1h']);
    expect(w.costUsd).toBe(4n * perM('3.75'));
    // Nothing to fall back to: left out of the total, and listed.
    const s = priceOf({ base: { input: perM('3') } }, { input: 1, web_search: 2 });
    expect(s.unpriced).toEqual(['web_search']);
    expect(s.costUsd).toBe(perM('3'));
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

  it('serialises to decimal strings in USD and CNY', () => {
    const j = breakdownJson(priceOf(sonnet, { input: 1000 }), 7_200_000_000n);
    expect(j.cost_pico_usd).toBe('3000000000');
    expect(j.cost_pico_cny).toBe('21600000000');
    expect(j.lines[0]).toEqual({ class: 'input', count: 1000, rate_pico_usd: '3000000', cost_pico_usd: '3000000000', cost_pico_cny: '21600000000' });
  });
});

describe('classCountsOf', () => {
  it('splits each total into the shares priced apart, which never exceed it', async () => {
    const { classCountsOf, noUsage } = await import('@/lib/billing/cost');
    expect(
      classCountsOf({
        ...noUsage(),
        promptTokens: 100,
        completionTokens: 50,
        cacheReadTokens: 7,
        cacheWriteTokens: 30,
        cacheWrite1hTokens: 10,
        reasoningTokens: 20,
        audioInputTokens: 40,
        imageInputTokens: 5,
        audioOutputTokens: 8,
      }),
    ).toEqual({
      input: 55,
      output: 22,
      cache_read: 7,
      cache_write_5m: 20,
      cache_write_1h: 10,
      reasoning: 20,
      audio_input: 40,
      image_input: 5,
      audio_output: 8,
    });
    // A completion capped below its reported reasoning: the shares shrink, the classes still sum to the total.
    expect(classCountsOf({ ...noUsage(), completionTokens: 10, reasoningTokens: 20, cacheWriteTokens: 3, cacheWrite1hTokens: 9 })).toEqual({
      input: 0,
      output: 0,
      cache_read: 0,
      cache_write_5m: 0,
      cache_write_1h: 3,
      reasoning: 10,
    });
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

describe('service tier reported by the upstream', () => {
  it('prices the usage at its multiplier and reserves enough for the dearest tier', async () => {
    const { breakdownOf, maxCostOf, noUsage } = await import('@/lib/billing/cost');
    const { modelInfo } = await import('../support/model-info');
    const m = modelInfo({ priceModel: { base: {}, serviceTiers: { flex: 5_000, priority: 17_000 } } });
    const usage = { ...noUsage(), promptTokens: 1000, completionTokens: 100 };
    const list = breakdownOf(m, usage).costUsd;
    expect(breakdownOf(m, { ...usage, serviceTier: 'priority' }).costUsd).toBe((list * 17n) / 10n);
    expect(breakdownOf(m, { ...usage, serviceTier: 'flex' }).costUsd).toBe(list / 2n);
    expect(maxCostOf(m, 1000, 100)).toBeGreaterThanOrEqual((list * 17n) / 10n);
  });
});

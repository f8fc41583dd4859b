// The breakdown a request's log row stores is made by the same steps as its charge
// (RequestContext.settleCost, docs/decisions/043): the token lines, the per-call tools, the
// response cache's fraction, the Batch API's discount and the cap at the reservation, adding up to
// the cost billed to the pico-dollar.
import { describe, expect, it } from 'vitest';
import { RequestContext } from '@/lib/gateway/context';
import { breakdownTotal } from '@/lib/pricing/breakdown';
import { noUsage } from '@/lib/billing/cost';
import type { GatewayConfig } from '@/lib/config';
import { modelInfo } from '../support/model-info';

const cfg = { usdToCny: '7.2', cnyRateNano: 7_200_000_000n } as GatewayConfig;
const SEARCH = 10_000_000_000n; // $0.01 per call
const model = modelInfo({ toolPrices: { web_search: SEARCH } });
const usage = { ...noUsage(), promptTokens: 1001, completionTokens: 333, cacheReadTokens: 7 };
const tokenCost = 1001n * 3_000_000n + 333n * 15_000_000n + 7n * 300_000n;

function context(): RequestContext {
  const ctx = new RequestContext('openai', '/v1/chat/completions', cfg);
  ctx.model = model;
  return ctx;
}

describe('settleCost records how the charge was made', () => {
  it('a batch line: token lines, the discount on them, then the tool calls at their price', () => {
    const ctx = context();
    ctx.batch = { discountPercent: () => 50 };
    const cost = ctx.settleCost(usage, undefined, { cost: 2n * SEARCH, billed: { web_search: 2 }, reported: { web_search: 2 } });
    expect(cost).toBe(tokenCost / 2n + 2n * SEARCH);
    const b = ctx.priceBreakdown!;
    expect(b.l.map((l) => l[0])).toEqual(['input', 'output', 'cache_read']);
    expect(b.k).toEqual([['web_search', 2, SEARCH.toString(), (2n * SEARCH).toString()]]);
    expect(b.a).toEqual([['batch_discount', '50', (-(tokenCost - tokenCost / 2n)).toString()]]);
    expect(breakdownTotal(b)).toBe(cost);
  });

  it('a response-cache hit: the full price, then the discount to the billed fraction', () => {
    const ctx = context();
    ctx.cacheHitBilledNano = 250_000_000n;
    const cost = ctx.settleCost(usage);
    expect(cost).toBe((tokenCost * 250_000_000n) / 1_000_000_000n);
    expect(ctx.priceBreakdown!.a).toEqual([['response_cache', '0.25', (cost - tokenCost).toString()]]);
    expect(breakdownTotal(ctx.priceBreakdown!)).toBe(cost);
  });

  it('a charge capped at the reservation says so, and still adds up', () => {
    const ctx = context();
    (ctx as unknown as { reserved: bigint }).reserved = 1_000_000n;
    expect(ctx.settleCost(usage)).toBe(1_000_000n);
    expect(ctx.priceBreakdown!.a).toEqual([['reservation_cap', '', (1_000_000n - tokenCost).toString()]]);
    expect(breakdownTotal(ctx.priceBreakdown!)).toBe(1_000_000n);
  });

  it('no model priced (refused before routing): no breakdown', () => {
    const ctx = new RequestContext('openai', '/v1/chat/completions', cfg);
    expect(ctx.settleCost(usage)).toBe(0n);
    expect(ctx.priceBreakdown).toBeNull();
  });
});

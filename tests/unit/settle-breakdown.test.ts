// The breakdown a request's log row stores is made by the same steps as its charge
// (settleCharge in lib/gateway/settlement.ts, docs/decisions/043): the token lines, the per-call tools, the
// response cache's fraction, the Batch API's discount and the cap at the reservation, adding up to
// the cost billed to the pico-dollar.
import { describe, expect, it } from 'vitest';
import { settleCharge, type ChargeInput } from '@/lib/gateway/settlement';
import { breakdownTotal } from '@/lib/pricing/breakdown';
import { noUsage } from '@/lib/billing/cost';
import { modelInfo } from '../support/model-info';

const SEARCH = 10_000_000_000n; // $0.01 per call
const model = modelInfo({ toolPrices: { web_search: SEARCH } });
const usage = { ...noUsage(), promptTokens: 1001, completionTokens: 333, cacheReadTokens: 7 };
const tokenCost = 1001n * 3_000_000n + 333n * 15_000_000n + 7n * 300_000n;

/** A request's charge, as the pipeline asks for it once the reply's usage is known. */
function settle(given: Partial<ChargeInput> = {}) {
  return settleCharge({ requestId: 'req_t', model, usage, reserved: null, cacheHitBilledNano: null, cnyRateNano: 7_200_000_000n, ...given });
}

describe('settleCharge records how the charge was made', () => {
  it('a batch line: token lines, the discount on them, then the tool calls at their price', () => {
    const charge = settle({ batchPercent: 50, tools: { cost: 2n * SEARCH, billed: { web_search: 2 }, reported: { web_search: 2 } } });
    const cost = charge.cost;
    expect(cost).toBe(tokenCost / 2n + 2n * SEARCH);
    const b = charge.breakdown!;
    expect(b.l.map((l) => l[0])).toEqual(['input', 'output', 'cache_read']);
    expect(b.k).toEqual([['web_search', 2, SEARCH.toString(), (2n * SEARCH).toString()]]);
    expect(b.a).toEqual([['batch_discount', '50', (-(tokenCost - tokenCost / 2n)).toString()]]);
    expect(breakdownTotal(b)).toBe(cost);
  });

  it('a response-cache hit: the full price, then the discount to the billed fraction', () => {
    const charge = settle({ cacheHitBilledNano: 250_000_000n });
    const cost = charge.cost;
    expect(cost).toBe((tokenCost * 250_000_000n) / 1_000_000_000n);
    expect(charge.breakdown!.a).toEqual([['response_cache', '0.25', (cost - tokenCost).toString()]]);
    expect(breakdownTotal(charge.breakdown!)).toBe(cost);
  });

  it('a charge capped at the reservation says so, and still adds up', () => {
    const charge = settle({ reserved: 1_000_000n });
    expect(charge.cost).toBe(1_000_000n);
    expect(charge.breakdown!.a).toEqual([['reservation_cap', '', (1_000_000n - tokenCost).toString()]]);
    expect(breakdownTotal(charge.breakdown!)).toBe(1_000_000n);
  });

  it('no model priced (refused before routing): no breakdown', () => {
    const charge = settle({ model: undefined });
    expect(charge.cost).toBe(0n);
    expect(charge.breakdown).toBeNull();
  });
});

import { usdToCny } from '@/lib/billing/money';

/**
 * One request's price, itemised (docs/decisions/035). The single function that computes a cost and
 * its breakdown together, so a header, a body, a log row and a ledger entry built from it agree.
 * All prices are integer pico-USD per token (or per use); all costs integer pico-USD, exact.
 */

/** Token and use classes a price list names. */
export const usageClasses = [
  'input',
  'output',
  'cache_read',
  'cache_write_5m',
  'cache_write_1h',
  'reasoning',
  'audio_input',
  'audio_output',
  'image_input',
  'image_output',
  'web_search',
  'code_execution',
] as const;
export type UsageClass = (typeof usageClasses)[number];

export type ClassCounts = Partial<Record<UsageClass, number>>;
export type ClassPrices = Partial<Record<UsageClass, bigint>>;

export interface PriceModel {
  /** Prices at or below the long-context threshold. */
  base: ClassPrices;
  /** Above `threshold` prompt tokens (input + cache read + cache writes), these prices replace the base ones. */
  longContext?: { threshold: number; prices: ClassPrices };
  /** Service-tier multipliers in basis points (10000 = 1x): batch, flex, priority. */
  serviceTiers?: Partial<Record<'batch' | 'flex' | 'priority', number>>;
}

export interface BreakdownLine {
  class: UsageClass;
  /** Set when the class has no price of its own and was billed at this class's rate (it is also in `unpriced`). */
  pricedAs?: UsageClass;
  count: number;
  /** pico-USD per token or use. */
  rate: bigint;
  cost: bigint;
}

export interface Breakdown {
  lines: BreakdownLine[];
  /** 'base' or 'long_context'. */
  tier: 'base' | 'long_context';
  serviceTier?: string;
  multiplierBp: number;
  /**
   * Classes the upstream reported that the price model has no price for: never silently priced at
   * zero. A share of a priced class (audio or image tokens, 1-hour cache writes) is billed at that
   * class's rate (its line says `pricedAs`); one with nothing to fall back to is left out of the total.
   */
  unpriced: UsageClass[];
  costUsd: bigint;
}

/** Prompt-side tokens that decide the long-context tier. */
export function promptSize(c: ClassCounts): number {
  return (c.input ?? 0) + (c.cache_read ?? 0) + (c.cache_write_5m ?? 0) + (c.cache_write_1h ?? 0) + (c.audio_input ?? 0) + (c.image_input ?? 0);
}

/**
 * The class whose rate bills a share that has no price of its own (docs/decisions/042): audio and
 * image tokens are input or output tokens to a list that does not tell them apart, a 1-hour write a
 * cache write. Reasoning is output on every list, so its fallback is silent (not "unpriced").
 */
const FALLBACK: Partial<Record<UsageClass, UsageClass>> = {
  audio_input: 'input',
  image_input: 'input',
  audio_output: 'output',
  image_output: 'output',
  cache_write_1h: 'cache_write_5m',
};

/**
 * Cost and breakdown of `counts` under `model`. A class with no price of its own in the tier falls
 * back: long-context prices to the base ones; reasoning to output; the shares of FALLBACK to their
 * class's rate (listed in `unpriced`); anything else is unpriced and left out.
 * A multiplier rounds half up once on the total, so line costs sum to the pre-multiplier cost exactly.
 */
export function priceOf(model: PriceModel, counts: ClassCounts, serviceTier?: string): Breakdown {
  const long = model.longContext !== undefined && promptSize(counts) > model.longContext.threshold;
  const priceFor = (k: UsageClass): bigint | undefined => {
    const own = (long ? model.longContext?.prices[k] : undefined) ?? model.base[k];
    if (own !== undefined) return own;
    if (k === 'reasoning') return priceFor('output');
    return undefined;
  };
  const lines: BreakdownLine[] = [];
  const unpriced: UsageClass[] = [];
  let sum = 0n;
  for (const k of usageClasses) {
    const count = counts[k] ?? 0;
    if (count <= 0) continue;
    let rate = priceFor(k);
    const fallback = FALLBACK[k];
    const pricedAs = rate === undefined && fallback !== undefined && priceFor(fallback) !== undefined ? fallback : undefined;
    if (rate === undefined) unpriced.push(k);
    if (pricedAs) rate = priceFor(pricedAs);
    if (rate === undefined) continue;
    const cost = BigInt(count) * rate;
    lines.push(pricedAs ? { class: k, pricedAs, count, rate, cost } : { class: k, count, rate, cost });
    sum += cost;
  }
  const tierKey = serviceTier as 'batch' | 'flex' | 'priority' | undefined;
  const multiplierBp = (tierKey && model.serviceTiers?.[tierKey]) ?? 10_000;
  const costUsd = multiplierBp === 10_000 ? sum : (sum * BigInt(multiplierBp) + 5_000n) / 10_000n;
  return { lines, tier: long ? 'long_context' : 'base', serviceTier, multiplierBp, unpriced, costUsd };
}

/** The breakdown as stored with the log row and returned by GET /api/logs/{id}: decimal strings, USD and CNY. */
export function breakdownJson(b: Breakdown, rateNano: bigint) {
  const s = (v: bigint) => v.toString();
  return {
    tier: b.tier,
    service_tier: b.serviceTier ?? null,
    multiplier_bp: b.multiplierBp,
    unpriced: b.unpriced,
    lines: b.lines.map((l) => ({
      class: l.class,
      ...(l.pricedAs ? { priced_as: l.pricedAs } : {}),
      count: l.count,
      rate_pico_usd: s(l.rate),
      cost_pico_usd: s(l.cost),
      cost_pico_cny: s(usdToCny(l.cost, rateNano)),
    })),
    cost_pico_usd: s(b.costUsd),
    cost_pico_cny: s(usdToCny(b.costUsd, rateNano)),
  };
}

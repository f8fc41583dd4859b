import { formatPico, usdToCny } from '@/lib/money';

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

/** The breakdown as pico-unit decimal strings, USD and CNY (what the log row stores and the API shows: storedBreakdown and breakdownView below). */
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

// ---- what a request's log row keeps, and what GET /api/logs/{id} shows (docs/decisions/043) ------

/**
 * A step between the priced lines and the billed cost, in the order the charge applied them:
 * the service-tier multiplier (its rounding included), the response cache's billed fraction, the
 * Batch API's discount, and the cap at the reservation. `amount` is signed pico-USD.
 */
export type AdjustmentKind = 'service_tier' | 'response_cache' | 'batch_discount' | 'reservation_cap';
export interface Adjustment {
  kind: AdjustmentKind;
  /** What was applied, as text: the tier and multiplier ("batch x0.5"), the fraction ("0.1"), the percent ("50"). */
  detail: string;
  amount: bigint;
}

/** The per-use line of a video job: seconds of video at the model's price per second. */
export const VIDEO_SECONDS = 'video_seconds';

/** A priced line beyond the token classes: a built-in tool billed per call (lib/pricing/tools.ts). */
export interface CallLine {
  tool: string;
  calls: number;
  rate: bigint;
  cost: bigint;
}

/**
 * The log row's `priceBreakdown` (JSONB), compact: `l` token lines `[class, tokens, pico-USD per
 * token, pico-USD]` (a fifth member names the class whose rate billed it, when it has none of its
 * own: `pricedAs`, docs/decisions/042), `k` per-call lines `[tool, calls, pico-USD per call, pico-USD]`, `a`
 * adjustments `[kind, detail, signed pico-USD]`, `u` unpriced classes. Pico amounts are integer
 * text (exact beyond 2^53). The lines plus the adjustments sum to the row's cost exactly.
 */
export interface StoredBreakdown {
  t: 'base' | 'long_context';
  l: ([string, number, string, string] | [string, number, string, string, string])[];
  k?: [string, number, string, string][];
  a?: [AdjustmentKind, string, string][];
  u?: string[];
}

/** The compact form of a breakdown, the per-call lines and the adjustments applied after it. */
export function storedBreakdown(b: Breakdown, calls: CallLine[], adjustments: Adjustment[]): StoredBreakdown {
  const out: StoredBreakdown = {
    t: b.tier,
    l: b.lines.map((l) => {
      const line: [string, number, string, string] = [l.class, l.count, l.rate.toString(), l.cost.toString()];
      return l.pricedAs ? [...line, l.pricedAs] : line;
    }),
  };
  const sum = b.lines.reduce((a, l) => a + l.cost, 0n);
  // The multiplier is inside b.costUsd: shown as the step it is, rounding included.
  const tier: Adjustment[] =
    b.multiplierBp === 10_000 ? [] : [{ kind: 'service_tier', detail: `${b.serviceTier ?? ''} x${b.multiplierBp / 10_000}`, amount: b.costUsd - sum }];
  const adj = [...tier, ...adjustments];
  if (calls.length) out.k = calls.map((c) => [c.tool, c.calls, c.rate.toString(), c.cost.toString()]);
  if (adj.length) out.a = adj.map((x) => [x.kind, x.detail, x.amount.toString()]);
  if (b.unpriced.length) out.u = [...b.unpriced];
  return out;
}

/** The sum of a stored breakdown's lines and adjustments: the cost it explains, pico-USD. */
export function breakdownTotal(s: StoredBreakdown): bigint {
  let total = 0n;
  for (const l of s.l) total += BigInt(l[3]);
  for (const k of s.k ?? []) total += BigInt(k[3]);
  for (const a of s.a ?? []) total += BigInt(a[2]);
  return total;
}

/** A stored breakdown read back from the database, or null when the value is not one (rows from before it, hand edits). */
export function parseStoredBreakdown(v: unknown): StoredBreakdown | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const s = v as Record<string, unknown>;
  const int = (x: unknown) => typeof x === 'string' && /^-?\d{1,40}$/.test(x);
  const line = (x: unknown, priced = false) =>
    Array.isArray(x) &&
    (x.length === 4 || (priced && x.length === 5 && typeof x[4] === 'string')) &&
    typeof x[0] === 'string' &&
    typeof x[1] === 'number' &&
    int(x[2]) &&
    int(x[3]);
  const adj = (x: unknown) => Array.isArray(x) && x.length === 3 && typeof x[0] === 'string' && typeof x[1] === 'string' && int(x[2]);
  if (s.t !== 'base' && s.t !== 'long_context') return null;
  if (!Array.isArray(s.l) || !s.l.every((x) => line(x, true))) return null;
  if (s.k !== undefined && !(Array.isArray(s.k) && s.k.every((x) => line(x)))) return null;
  if (s.a !== undefined && !(Array.isArray(s.a) && s.a.every(adj))) return null;
  if (s.u !== undefined && !(Array.isArray(s.u) && s.u.every((x) => typeof x === 'string'))) return null;
  return s as unknown as StoredBreakdown;
}

const text = (pico: bigint) => formatPico(pico);

/**
 * The breakdown as GET /api/logs/{id} returns it: each line's count, rate and cost, each adjustment,
 * in USD and in CNY at `rateNano` (the request's own rate), as exact decimal text. Each CNY amount
 * is converted and rounded to the pico on its own; the totals are converted once, as the row's cost.
 */
export function breakdownView(s: StoredBreakdown, rateNano: bigint) {
  const cny = (pico: bigint) => text(usdToCny(pico, rateNano));
  return {
    tier: s.t,
    lines: s.l.map(([cls, tokens, rate, cost, pricedAs]) => ({
      class: cls,
      /** The class whose rate billed this one (it has no price of its own); null when its own. */
      priced_as: pricedAs ?? null,
      tokens,
      rate_usd_per_million: text(BigInt(rate) * 1_000_000n),
      rate_cny_per_million: cny(BigInt(rate) * 1_000_000n),
      cost_usd: text(BigInt(cost)),
      cost_cny: cny(BigInt(cost)),
    })),
    calls: (s.k ?? []).map(([tool, calls, rate, cost]) => ({
      tool,
      calls,
      rate_usd_per_call: text(BigInt(rate)),
      rate_cny_per_call: cny(BigInt(rate)),
      cost_usd: text(BigInt(cost)),
      cost_cny: cny(BigInt(cost)),
    })),
    adjustments: (s.a ?? []).map(([kind, detail, amount]) => ({ kind, detail, amount_usd: text(BigInt(amount)), amount_cny: cny(BigInt(amount)) })),
    unpriced: s.u ?? [],
    total_usd: text(breakdownTotal(s)),
    total_cny: cny(breakdownTotal(s)),
  };
}

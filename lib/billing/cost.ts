import type { ModelInfo } from '@/lib/config';
import { usdToCny } from '@/lib/billing/money';
import { priceOf, type Breakdown, type ClassCounts, type PriceModel } from '@/lib/billing/breakdown';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** True when counted by our tokenizer because the upstream reported none. */
  estimated: boolean;
}

/** Largest token count believed from an upstream (no model's context or output comes near it). */
export const MAX_REPORTED_TOKENS = 100_000_000;

/**
 * A token count as an upstream reported it, if it is one: a finite, non-negative number, rounded to
 * a whole count and capped. Anything else (negative, NaN, a string) is no count at all, so the
 * caller estimates instead: upstream usage must never credit a balance or overflow a price.
 */
export function usageCount(v: unknown): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return undefined;
  return Math.min(MAX_REPORTED_TOKENS, Math.round(v));
}

export const noUsage = (): Usage => ({ promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false });

/** The model's price list, its four classic prices as the ModelInfo carries them (tests override those). */
function priceModelFor(model: ModelInfo): PriceModel {
  const pm = model.priceModel ?? { base: {} };
  return {
    ...pm,
    base: { ...pm.base, input: model.inputPrice, output: model.outputPrice, cache_read: model.cacheReadPrice, cache_write_5m: model.cacheWritePrice },
  };
}

/** A request's usage as priced token classes. */
export function classCountsOf(usage: Usage): ClassCounts {
  return { input: usage.promptTokens, output: usage.completionTokens, cache_read: usage.cacheReadTokens, cache_write_5m: usage.cacheWriteTokens };
}

/** Cost and itemised breakdown of a request: the one computation every figure of its price comes from. */
export function breakdownOf(model: ModelInfo, usage: Usage, serviceTier?: string): Breakdown {
  return priceOf(priceModelFor(model), classCountsOf(usage), serviceTier);
}

/** Exact cost in pico-USD: each token class at its own per-token price (docs/decisions/035). */
export function costOf(model: ModelInfo, usage: Usage): bigint {
  return breakdownOf(model, usage).costUsd;
}

/** The most a request can cost: what is reserved against the balance before going upstream. */
export function maxCostOf(model: ModelInfo, promptTokens: number, maxOutputTokens: number): bigint {
  const max = (...v: (bigint | undefined)[]) => v.reduce<bigint>((a, b) => (b !== undefined && b > a ? b : a), 0n);
  const long = model.priceModel?.longContext?.prices ?? {};
  // The prompt may all be cache writes (1h ones included) or cross the long-context tier.
  const perPrompt = max(model.inputPrice, model.cacheWritePrice, model.priceModel?.base.cache_write_1h, long.input, long.cache_write_5m, long.cache_write_1h);
  const perOutput = max(model.outputPrice, model.priceModel?.base.reasoning, long.output);
  return BigInt(promptTokens) * perPrompt + BigInt(maxOutputTokens) * perOutput;
}

export function cnyOf(costUsd: bigint, rateNano: bigint): bigint {
  return usdToCny(costUsd, rateNano);
}

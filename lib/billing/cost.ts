import type { ModelInfo } from '@/lib/config';
import { usdToCny } from '@/lib/billing/money';

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

/** Exact cost in pico-USD: each token class at its own per-token price. */
export function costOf(model: ModelInfo, usage: Usage): bigint {
  return (
    BigInt(usage.promptTokens) * model.inputPrice +
    BigInt(usage.completionTokens) * model.outputPrice +
    BigInt(usage.cacheReadTokens) * model.cacheReadPrice +
    BigInt(usage.cacheWriteTokens) * model.cacheWritePrice
  );
}

/** The most a request can cost: what is reserved against the balance before going upstream. */
export function maxCostOf(model: ModelInfo, promptTokens: number, maxOutputTokens: number): bigint {
  const cacheWrite = model.cacheWritePrice > model.inputPrice ? model.cacheWritePrice : model.inputPrice;
  return BigInt(promptTokens) * cacheWrite + BigInt(maxOutputTokens) * model.outputPrice;
}

export function cnyOf(costUsd: bigint, rateNano: bigint): bigint {
  return usdToCny(costUsd, rateNano);
}

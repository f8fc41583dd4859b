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

import type { ModelInfo } from '@/lib/config';
import { usdToCny } from '@/lib/money';
import { priceOf, type Breakdown, type ClassCounts, type PriceModel } from '@/lib/pricing/breakdown';

/**
 * The parts of a usage's four totals that have prices of their own (docs/decisions/042). Each is a
 * share of a total, never added to it: audio and image input of `promptTokens`, 1-hour writes of
 * `cacheWriteTokens`, reasoning and audio/image output of `completionTokens`. So everything that
 * counts tokens (limits, the log's columns, the client's usage) keeps reading the totals.
 */
export interface UsageSplit {
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  audioInputTokens?: number;
  imageInputTokens?: number;
  audioOutputTokens?: number;
  imageOutputTokens?: number;
}

/** The service tiers an upstream reports that change a price (lib/pricing/breakdown.ts multipliers). */
export type PricedServiceTier = 'flex' | 'priority';

export interface Usage extends UsageSplit {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** True when counted by our tokenizer because the upstream reported none. */
  estimated: boolean;
  /** The tier the upstream served at, when it is priced apart (its multiplier applies). */
  serviceTier?: PricedServiceTier;
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
// A model's price model is built once per ModelInfo (a config load or a console edit makes new
// ModelInfo objects, never changes one), not once per request: it is on every request's settle path.
const priceModels = new WeakMap<ModelInfo, PriceModel>();

function priceModelFor(model: ModelInfo): PriceModel {
  let built = priceModels.get(model);
  if (!built) {
    const pm = model.priceModel ?? { base: {} };
    built = {
      ...pm,
      base: { ...pm.base, input: model.inputPrice, output: model.outputPrice, cache_read: model.cacheReadPrice, cache_write_5m: model.cacheWritePrice },
    };
    priceModels.set(model, built);
  }
  return built;
}

/**
 * A request's usage as priced token classes: each total less the shares priced apart. A share is
 * capped by what is left of its total (a capped completion, an upstream reporting more audio than
 * prompt), so the classes always sum to the totals.
 */
export function classCountsOf(usage: Usage): ClassCounts {
  let input = usage.promptTokens;
  let output = usage.completionTokens;
  const takeIn = (n = 0) => {
    const t = Math.min(Math.max(0, n), input);
    input -= t;
    return t;
  };
  const takeOut = (n = 0) => {
    const t = Math.min(Math.max(0, n), output);
    output -= t;
    return t;
  };
  const audioIn = takeIn(usage.audioInputTokens);
  const imageIn = takeIn(usage.imageInputTokens);
  const reasoning = takeOut(usage.reasoningTokens);
  const audioOut = takeOut(usage.audioOutputTokens);
  const imageOut = takeOut(usage.imageOutputTokens);
  const write1h = Math.min(Math.max(0, usage.cacheWrite1hTokens ?? 0), usage.cacheWriteTokens);
  const counts: ClassCounts = {
    input,
    output,
    cache_read: usage.cacheReadTokens,
    cache_write_5m: usage.cacheWriteTokens - write1h,
  };
  if (write1h) counts.cache_write_1h = write1h;
  if (reasoning) counts.reasoning = reasoning;
  if (audioIn) counts.audio_input = audioIn;
  if (imageIn) counts.image_input = imageIn;
  if (audioOut) counts.audio_output = audioOut;
  if (imageOut) counts.image_output = imageOut;
  return counts;
}

/** Cost and itemised breakdown of a request: the one computation every figure of its price comes from. */
export function breakdownOf(model: ModelInfo, usage: Usage, serviceTier: string | undefined = usage.serviceTier): Breakdown {
  return priceOf(priceModelFor(model), classCountsOf(usage), serviceTier);
}

/** Exact cost in pico-USD: each token class at its own per-token price (docs/decisions/035). */
export function costOf(model: ModelInfo, usage: Usage): bigint {
  return breakdownOf(model, usage).costUsd;
}

/**
 * The rates a reservation assumes (the dearest a token can be billed): per prompt token (a cache
 * write, 1-hour ones included, audio or images, past the long-context threshold), per output token
 * (reasoning, audio or images, long context), and the dearest service-tier multiplier, since the
 * upstream may serve at a dearer tier than asked (priority). The output clamp uses the same rates.
 */
export function reservationRates(model: ModelInfo): { perPrompt: bigint; perOutput: bigint; multiplierBp: number } {
  const max = (...v: (bigint | undefined)[]) => v.reduce<bigint>((a, b) => (b !== undefined && b > a ? b : a), 0n);
  const base = model.priceModel?.base ?? {};
  const long = model.priceModel?.longContext?.prices ?? {};
  const tiers = model.priceModel?.serviceTiers ?? {};
  return {
    perPrompt: max(
      model.inputPrice,
      model.cacheWritePrice,
      base.cache_write_1h,
      base.audio_input,
      base.image_input,
      long.input,
      long.cache_write_5m,
      long.cache_write_1h,
    ),
    perOutput: max(model.outputPrice, base.reasoning, base.audio_output, base.image_output, long.output),
    multiplierBp: Math.max(10_000, tiers.flex ?? 0, tiers.priority ?? 0),
  };
}

/** The most a request can cost: what is reserved against the balance before going upstream (a multiplier rounds up). */
export function maxCostOf(model: ModelInfo, promptTokens: number, maxOutputTokens: number): bigint {
  const { perPrompt, perOutput, multiplierBp } = reservationRates(model);
  const tokens = BigInt(promptTokens) * perPrompt + BigInt(maxOutputTokens) * perOutput;
  return multiplierBp === 10_000 ? tokens : (tokens * BigInt(multiplierBp) + 9_999n) / 10_000n;
}

export function cnyOf(costUsd: bigint, rateNano: bigint): bigint {
  return usdToCny(costUsd, rateNano);
}

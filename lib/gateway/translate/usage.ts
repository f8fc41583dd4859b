// Every upstream protocol's usage read into billing terms (UpstreamUsage): OpenAI chat, the
// Responses API, Anthropic Messages (whole, or split across message_start and message_delta) and
// Gemini. One reader per protocol, shared by every translator with that upstream, so a class read
// for one client surface is read for all of them (docs/decisions/042). A share priced apart
// (audio, 1-hour writes, …) is set only when the upstream reported some.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { usageCount, type PricedServiceTier, type UsageSplit } from '@/lib/billing/cost';
import type { JsonObject } from '@/lib/gateway/body';
import type { UpstreamUsage } from '@/lib/gateway/translate/types';

const objectAt = (o: JsonObject, key: string): JsonObject => (isObject(o[key]) ? o[key] : {});

/**
 * The service tier an upstream says it served at, when it changes the price: OpenAI's `flex` and
 * `priority` (`service_tier` of a reply or chunk), Anthropic's `priority` (`usage.service_tier`).
 * `default`, `auto`, `standard` are the list price; `batch` never answers a live call (the Batch
 * API's discount is applied by the batch itself).
 */
export function pricedServiceTier(v: unknown): PricedServiceTier | undefined {
  return v === 'flex' || v === 'priority' ? v : undefined;
}

/** Sets a share when the upstream reported a positive count of it. */
function share(usage: UpstreamUsage, key: keyof UsageSplit, v: unknown): void {
  const n = usageCount(v);
  if (n) usage[key] = n;
}

/**
 * OpenAI chat's usage (and the compatible providers'): prompt_tokens includes the cached tokens
 * (`prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`) and any written
 * (`cache_write_tokens`); audio and image input are shares of it, reasoning and audio output shares
 * of completion_tokens; `tier` is the reply's `service_tier`. Null without a usable prompt count.
 */
export function openaiUsage(u: unknown, tier?: unknown): UpstreamUsage | null {
  if (!isObject(u)) return null;
  const prompt = usageCount(u.prompt_tokens);
  if (prompt === undefined) return null;
  const details = objectAt(u, 'prompt_tokens_details');
  const out = objectAt(u, 'completion_tokens_details');
  const cacheRead = Math.min(prompt, usageCount(details.cached_tokens) ?? usageCount(u.prompt_cache_hit_tokens) ?? 0);
  const cacheWrite = Math.min(prompt - cacheRead, usageCount(details.cache_write_tokens) ?? 0);
  const usage: UpstreamUsage = {
    promptTokens: prompt - cacheRead - cacheWrite,
    completionTokens: usageCount(u.completion_tokens) ?? 0,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    reasoningTokens: usageCount(out.reasoning_tokens) ?? 0,
    completionFinal: true,
  };
  share(usage, 'audioInputTokens', details.audio_tokens);
  share(usage, 'imageInputTokens', details.image_tokens);
  share(usage, 'audioOutputTokens', out.audio_tokens);
  share(usage, 'imageOutputTokens', out.image_tokens);
  const serviceTier = pricedServiceTier(tier);
  if (serviceTier) usage.serviceTier = serviceTier;
  return usage;
}

/** The Responses API's usage: input_tokens includes the cached (and written) tokens, output_tokens the reasoning; `tier` is the Response's `service_tier`. */
export function responsesUsage(u: unknown, tier?: unknown): UpstreamUsage | null {
  if (!isObject(u)) return null;
  const input = usageCount(u.input_tokens);
  if (input === undefined) return null;
  const details = objectAt(u, 'input_tokens_details');
  const cached = Math.min(input, usageCount(details.cached_tokens) ?? 0);
  const written = Math.min(input - cached, usageCount(details.cache_write_tokens) ?? 0);
  const usage: UpstreamUsage = {
    promptTokens: input - cached - written,
    completionTokens: usageCount(u.output_tokens) ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
    reasoningTokens: usageCount(objectAt(u, 'output_tokens_details').reasoning_tokens) ?? 0,
    completionFinal: true,
  };
  const serviceTier = pricedServiceTier(tier);
  if (serviceTier) usage.serviceTier = serviceTier;
  return usage;
}

/**
 * Folds an Anthropic usage object into `acc`: a whole reply's, or a stream's message_start (input
 * and cache counts) then message_delta (cumulative output; newer API versions repeat the input and
 * cache counts there, and add server_tool_use). input_tokens is the uncached prompt; the cache
 * writes are `cache_creation_input_tokens`, split by `cache_creation` into 5-minute and 1-hour
 * ones (their sum when the total is missing); `service_tier` the tier served. `final`: the output count is the last one.
 */
export function takeAnthropicUsage(acc: UpstreamUsage | null, u: unknown, final: boolean): UpstreamUsage | null {
  if (!isObject(u)) return acc;
  const input = usageCount(u.input_tokens);
  if (!acc) {
    if (input === undefined) return null;
    acc = { promptTokens: input, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, completionFinal: false };
  } else if (input !== undefined) acc.promptTokens = input;
  const creation = isObject(u.cache_creation) ? u.cache_creation : undefined;
  const write5m = usageCount(creation?.ephemeral_5m_input_tokens);
  const write1h = usageCount(creation?.ephemeral_1h_input_tokens);
  const written = usageCount(u.cache_creation_input_tokens) ?? (creation ? (write5m ?? 0) + (write1h ?? 0) : undefined);
  if (written !== undefined) acc.cacheWriteTokens = written;
  if (write1h !== undefined) {
    if (write1h > 0) acc.cacheWrite1hTokens = write1h;
    else delete acc.cacheWrite1hTokens;
  }
  acc.cacheReadTokens = usageCount(u.cache_read_input_tokens) ?? acc.cacheReadTokens;
  const serviceTier = pricedServiceTier(u.service_tier);
  if (serviceTier) acc.serviceTier = serviceTier;
  const output = usageCount(u.output_tokens);
  if (output !== undefined) {
    acc.completionTokens = output;
    if (final) acc.completionFinal = true;
  }
  return acc;
}

/** Tokens of one modality in a Gemini `*TokensDetails` list ([{modality, tokenCount}]). */
function modalityTokens(list: unknown, modality: string): number {
  if (!Array.isArray(list)) return 0;
  let n = 0;
  for (const d of list) if (isObject(d) && d.modality === modality) n += usageCount(d.tokenCount) ?? 0;
  return n;
}

/**
 * Gemini's usageMetadata: the prompt less its cached part (implicit or explicit cache, billed at the
 * cache price), plus the tokens of built-in tool prompts (billed as input); candidatesTokenCount
 * leaves out the thoughts, both billed as output (thoughts as reasoning). Audio input (uncached)
 * and audio or image output are shares priced apart; image and video input are not (Google prices
 * them as text). Null without a usable prompt count.
 */
export function geminiUsage(u: unknown, completionFinal: boolean): UpstreamUsage | null {
  if (!isObject(u)) return null;
  const prompt = usageCount(u.promptTokenCount);
  if (prompt === undefined) return null;
  const cached = Math.min(prompt, usageCount(u.cachedContentTokenCount) ?? 0);
  const thoughts = usageCount(u.thoughtsTokenCount) ?? 0;
  const usage: UpstreamUsage = {
    promptTokens: prompt - cached + (usageCount(u.toolUsePromptTokenCount) ?? 0),
    completionTokens: (usageCount(u.candidatesTokenCount) ?? 0) + thoughts,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
    completionFinal,
  };
  share(usage, 'audioInputTokens', modalityTokens(u.promptTokensDetails, 'AUDIO') - modalityTokens(u.cacheTokensDetails, 'AUDIO'));
  share(usage, 'audioOutputTokens', modalityTokens(u.candidatesTokensDetails, 'AUDIO'));
  share(usage, 'imageOutputTokens', modalityTokens(u.candidatesTokensDetails, 'IMAGE'));
  return usage;
}

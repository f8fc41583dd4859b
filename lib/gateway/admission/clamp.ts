// Budgets people can use (#40): a request whose largest possible reply its key budget or balance
// cannot cover is not refused outright. Its output cap (max_tokens and kin, each surface's own
// field) is lowered to what is left, the reply says so in `x-service-max-tokens-clamped` and the
// log in its route reason. When not even a short reply fits, or the operator turned clamping off
// (`clamp_output_to_budget: false`), the 402 names the largest cap that would have fitted.
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { reservationRates } from '@/lib/billing/cost';
import type { JsonBody, JsonObject } from '@/lib/gateway/body';
import type { ClientRequest } from '@/lib/gateway/translate/types';

/** Fewest output tokens worth clamping to: a shorter reply is cut before it says anything. */
export const MIN_CLAMPED_OUTPUT_TOKENS = 16;

/** A surface's output cap in its own request body. */
export interface OutputCap {
  /** The field named in a 402 (`max_tokens`, `max_output_tokens`). */
  field: string;
  /** The body with its cap set to `tokens` (`model`: the planned model, for a field that depends on its vendor). */
  set(body: JsonObject, tokens: number, model: ModelInfo): JsonObject;
}

/**
 * The largest output cap that `available` pays for on every planned model, the prompt charged at
 * its bound as the reservation charges it (pipeline.ts); never above what the client asked for or
 * the model's own maximum. 0 when not even the prompt fits.
 */
export function affordableOutputTokens(
  models: ModelInfo[],
  promptBound: number,
  choices: number,
  asked: number | undefined,
  available: bigint,
  /** What else the reservation holds for a model (built-in tool calls), pico-USD. */
  extra: (model: ModelInfo) => bigint = () => 0n,
): number {
  let best = Number.MAX_SAFE_INTEGER;
  for (const m of models) {
    // The reservation's own rates (lib/billing/cost.ts maxCostOf): what fits here is what admission reserves.
    const { perPrompt, perOutput, multiplierBp } = reservationRates(m);
    const forTokens = available - extra(m);
    const left = (forTokens < 0n ? forTokens : (forTokens * 10_000n) / BigInt(multiplierBp)) - BigInt(promptBound) * perPrompt;
    if (left < 0n) return 0;
    const cap = Math.min(asked ?? m.maxOutputTokens, m.maxOutputTokens);
    const perToken = perOutput * BigInt(choices);
    const fits = perToken === 0n ? cap : Number(left / perToken < BigInt(cap) ? left / perToken : BigInt(cap));
    best = Math.min(best, fits);
  }
  return best === Number.MAX_SAFE_INTEGER ? 0 : best;
}

/** The client's request with another body (serialised afresh: it goes upstream as these bytes). */
export function withBody(client: ClientRequest, json: JsonObject): ClientRequest {
  const text = JSON.stringify(json);
  const body: JsonBody = { raw: Buffer.from(text), text, json, verbatim: true };
  return { body, headers: client.headers };
}

/** OpenAI chat: the field(s) the client sent; else OpenAI's own name for OpenAI's models (its reasoning models refuse max_tokens) and max_tokens for other vendors'. */
export const chatOutputCap: OutputCap = {
  field: 'max_tokens',
  set(body, tokens, model) {
    const out = { ...body };
    const sent = (['max_tokens', 'max_completion_tokens'] as const).filter((f) => body[f] !== undefined && body[f] !== null);
    if (sent.length === 0) sent.push(model.ownedBy === 'openai' ? 'max_completion_tokens' : 'max_tokens');
    // A cap the client set lower than what fits stays as it is (both may be sent; the larger is reserved).
    for (const f of sent) out[f] = typeof body[f] === 'number' && (body[f] as number) < tokens ? body[f] : tokens;
    return out;
  },
};

/** Anthropic's thinking budget must stay below max_tokens, and at least 1,024: lowered with it, or left out. */
const MIN_THINKING_BUDGET = 1024;

export const messagesOutputCap: OutputCap = {
  field: 'max_tokens',
  set(body, tokens) {
    const out: JsonObject = { ...body, max_tokens: tokens };
    const thinking = body.thinking;
    if (isObject(thinking) && typeof thinking.budget_tokens === 'number') {
      const budget = Math.min(thinking.budget_tokens, tokens - 1);
      if (budget >= MIN_THINKING_BUDGET) out.thinking = { ...thinking, budget_tokens: budget };
      else delete out.thinking;
    }
    return out;
  },
};

/** Gemini: generationConfig.maxOutputTokens. */
export const geminiOutputCap: OutputCap = {
  field: 'generationConfig.maxOutputTokens',
  set(body, tokens) {
    const cfg = body.generationConfig;
    const base = isObject(cfg) ? cfg : {};
    return { ...body, generationConfig: { ...base, maxOutputTokens: tokens } };
  },
};

export const responsesOutputCap: OutputCap = { field: 'max_output_tokens', set: (body, tokens) => ({ ...body, max_output_tokens: tokens }) };

/** The header a clamped reply carries: the output cap the request was served with. */
export const CLAMPED_HEADER = 'x-service-max-tokens-clamped';

import { describe, expect, it } from 'vitest';
import type { ModelInfo } from '@/lib/config';
import { affordableOutputTokens, chatOutputCap, geminiOutputCap, messagesOutputCap, responsesOutputCap } from '@/lib/gateway/admission/clamp';

// Prices in pico-USD per token: gpt-4o-mini's $0.15 / $0.60 per million.
const mini = { name: 'gpt-4o-mini', ownedBy: 'openai', inputPrice: 150_000n, outputPrice: 600_000n, cacheWritePrice: 0n, maxOutputTokens: 4096 } as ModelInfo;
const deepseek = {
  name: 'deepseek-chat',
  ownedBy: 'deepseek',
  inputPrice: 270_000n,
  outputPrice: 1_100_000n,
  cacheWritePrice: 0n,
  maxOutputTokens: 8192,
} as ModelInfo;
const usd = (text: string) => BigInt(Math.round(Number(text) * 1e12));

describe('affordableOutputTokens', () => {
  it('is the largest cap every planned model pays for after the prompt, never above what was asked or the model allows', () => {
    // $0.002 - 100 prompt tokens at $0.15/M = $0.001985, at $0.60/M: 3308 tokens.
    expect(affordableOutputTokens([mini], 100, 1, undefined, usd('0.002'))).toBe(3308);
    // The fallback is dearer: (0.002 - 100 * 0.27e-6) / 1.1e-6 = 1793.
    expect(affordableOutputTokens([mini, deepseek], 100, 1, undefined, usd('0.002'))).toBe(1793);
    expect(affordableOutputTokens([mini], 100, 2, undefined, usd('0.002'))).toBe(1654);
    expect(affordableOutputTokens([mini], 100, 1, 500, usd('0.002'))).toBe(500);
    expect(affordableOutputTokens([mini], 100, 1, undefined, usd('10'))).toBe(4096);
  });

  it('leaves room for what else the reservation holds (built-in tool calls)', () => {
    // $0.002 - 100 prompt tokens - $0.001 of tool calls = $0.000985 at $0.60/M: 1641 tokens.
    expect(affordableOutputTokens([mini], 100, 1, undefined, usd('0.002'), () => usd('0.001'))).toBe(1641);
  });

  it('fits what admission reserves for a price list with audio output and a priority tier', async () => {
    const { maxCostOf } = await import('@/lib/billing/cost');
    const audio = {
      ...mini,
      priceModel: { base: { audio_output: 80_000_000n }, serviceTiers: { priority: 17_000 } },
    } as ModelInfo;
    const tokens = affordableOutputTokens([audio], 100, 1, undefined, usd('0.01'));
    // ($0.01 / 1.7 - 100 * $0.15/M) / $80/M = 73 tokens, and their reservation fits the $0.01.
    expect(tokens).toBe(73);
    expect(maxCostOf(audio, 100, tokens)).toBeLessThanOrEqual(usd('0.01'));
    expect(maxCostOf(audio, 100, tokens + 1)).toBeGreaterThan(usd('0.01'));
  });

  it('is 0 when not even the prompt fits', () => {
    expect(affordableOutputTokens([mini], 100, 1, undefined, usd('0.00001'))).toBe(0);
  });
});

describe('output cap fields', () => {
  it('OpenAI chat: lowers the fields the client sent (never raising a lower one), else the vendor’s own field', () => {
    expect(chatOutputCap.set({ max_tokens: 4000 }, 300, mini)).toEqual({ max_tokens: 300 });
    expect(chatOutputCap.set({ max_tokens: 1, max_completion_tokens: 4000 }, 300, mini)).toEqual({ max_tokens: 1, max_completion_tokens: 300 });
    expect(chatOutputCap.set({}, 300, mini)).toEqual({ max_completion_tokens: 300 });
    expect(chatOutputCap.set({}, 300, deepseek)).toEqual({ max_tokens: 300 });
  });

  it('Anthropic Messages and Responses set their own fields', () => {
    expect(messagesOutputCap.set({ max_tokens: 4096 }, 300, mini)).toEqual({ max_tokens: 300 });
    expect(responsesOutputCap.set({ input: 'Hi' }, 300, mini)).toEqual({ input: 'Hi', max_output_tokens: 300 });
    expect(responsesOutputCap.field).toBe('max_output_tokens');
  });
});

describe('output caps that carry a thinking budget or live in a nested config', () => {
  it('Anthropic: a thinking budget stays below the lowered max_tokens, or thinking is left out below 1,024', () => {
    const body = { model: 'claude-sonnet-4-5', max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 31999 } };
    expect(messagesOutputCap.set(body, 5000, mini)).toEqual({ ...body, max_tokens: 5000, thinking: { type: 'enabled', budget_tokens: 4999 } });
    const low = messagesOutputCap.set(body, 800, mini);
    expect(low.max_tokens).toBe(800);
    expect(low.thinking).toBeUndefined();
    expect(messagesOutputCap.set({ max_tokens: 9000, thinking: { type: 'adaptive' } }, 100, mini)).toEqual({ max_tokens: 100, thinking: { type: 'adaptive' } });
  });

  it('Gemini: generationConfig.maxOutputTokens, the rest of the config kept', () => {
    expect(geminiOutputCap.field).toBe('generationConfig.maxOutputTokens');
    expect(geminiOutputCap.set({ contents: [], generationConfig: { temperature: 0.2 } }, 300, mini)).toEqual({
      contents: [],
      generationConfig: { temperature: 0.2, maxOutputTokens: 300 },
    });
  });
});

import { describe, expect, it } from 'vitest';
import { geminiUsage, openaiUsage, responsesUsage, takeAnthropicUsage } from '@/lib/gateway/translate/usage';
import { clientUsage } from '@/lib/gateway/translate/openai-client';
import { anthropicUsage } from '@/lib/gateway/translate/anthropic-client';
import { usageMetadata } from '@/lib/gateway/translate/gemini-client';
import type { Settlement } from '@/lib/gateway/translate/types';

const settledUsage = (u: Partial<Settlement['usage']>): Settlement['usage'] => ({
  promptTokens: 0,
  completionTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  ...u,
});

describe('upstream usage readers', () => {
  it('OpenAI chat: cached, audio and reasoning tokens are shares of their totals', () => {
    expect(
      openaiUsage({
        prompt_tokens: 1000,
        completion_tokens: 300,
        prompt_tokens_details: { cached_tokens: 400, audio_tokens: 200 },
        completion_tokens_details: { reasoning_tokens: 100, audio_tokens: 50 },
      }),
    ).toEqual({
      promptTokens: 600,
      completionTokens: 300,
      cacheReadTokens: 400,
      cacheWriteTokens: 0,
      reasoningTokens: 100,
      audioInputTokens: 200,
      audioOutputTokens: 50,
      completionFinal: true,
    });
  });

  it('Responses: cached and written input, reasoning output', () => {
    expect(
      responsesUsage({
        input_tokens: 900,
        input_tokens_details: { cached_tokens: 500, cache_write_tokens: 100 },
        output_tokens: 70,
        output_tokens_details: { reasoning_tokens: 40 },
      }),
    ).toMatchObject({ promptTokens: 300, cacheReadTokens: 500, cacheWriteTokens: 100, completionTokens: 70, reasoningTokens: 40 });
  });

  it('Anthropic: usage split across message_start and message_delta, 5-minute and 1-hour writes', () => {
    let u = takeAnthropicUsage(
      null,
      {
        input_tokens: 12,
        cache_creation_input_tokens: 3000,
        cache_read_input_tokens: 8000,
        cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
        output_tokens: 1,
      },
      false,
    );
    expect(u).toMatchObject({
      promptTokens: 12,
      cacheWriteTokens: 3000,
      cacheWrite1hTokens: 2000,
      cacheReadTokens: 8000,
      completionTokens: 1,
      completionFinal: false,
    });
    u = takeAnthropicUsage(u, { output_tokens: 420, server_tool_use: { web_search_requests: 2 } }, true);
    expect(u).toMatchObject({
      promptTokens: 12,
      cacheWriteTokens: 3000,
      cacheWrite1hTokens: 2000,
      cacheReadTokens: 8000,
      completionTokens: 420,
      completionFinal: true,
    });
    // Only the split given: the writes are its sum.
    expect(takeAnthropicUsage(null, { input_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 7 } }, true)).toMatchObject({
      cacheWriteTokens: 12,
      cacheWrite1hTokens: 7,
    });
  });

  it('Gemini: implicit cache, thoughts, tool-use prompt and audio modality', () => {
    expect(
      geminiUsage(
        {
          promptTokenCount: 1000,
          cachedContentTokenCount: 600,
          candidatesTokenCount: 50,
          thoughtsTokenCount: 80,
          toolUsePromptTokenCount: 30,
          promptTokensDetails: [
            { modality: 'TEXT', tokenCount: 700 },
            { modality: 'AUDIO', tokenCount: 300 },
          ],
          cacheTokensDetails: [{ modality: 'AUDIO', tokenCount: 100 }],
          candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: 20 }],
        },
        true,
      ),
    ).toEqual({
      promptTokens: 430,
      completionTokens: 130,
      cacheReadTokens: 600,
      cacheWriteTokens: 0,
      reasoningTokens: 80,
      audioInputTokens: 200,
      imageOutputTokens: 20,
      completionFinal: true,
    });
  });

  it('garbage counts are no counts', () => {
    expect(openaiUsage({ prompt_tokens: -1 })).toBeNull();
    expect(openaiUsage({ prompt_tokens: 5, prompt_tokens_details: { audio_tokens: 'x' } })).not.toHaveProperty('audioInputTokens');
  });
});

describe('client usage writers carry the shares where the protocol has a field', () => {
  const u = settledUsage({
    promptTokens: 600,
    cacheReadTokens: 400,
    cacheWriteTokens: 30,
    cacheWrite1hTokens: 10,
    completionTokens: 300,
    reasoningTokens: 100,
    audioInputTokens: 200,
    audioOutputTokens: 50,
  });

  it('OpenAI chat: audio_tokens in both details', () => {
    expect(clientUsage({ usage: u, costUsd: '0', costCny: '0', channel: 'c', latencyMs: 1 })).toEqual({
      prompt_tokens: 1030,
      completion_tokens: 300,
      total_tokens: 1330,
      prompt_tokens_details: { cached_tokens: 400, audio_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 100, audio_tokens: 50 },
    });
  });

  it('Anthropic: cache_creation split and server_tool_use', () => {
    expect(anthropicUsage(u, { web_search: 3 })).toEqual({
      input_tokens: 600,
      output_tokens: 300,
      cache_creation_input_tokens: 30,
      cache_read_input_tokens: 400,
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 10 },
      server_tool_use: { web_search_requests: 3 },
    });
  });

  it('Gemini: cached, thoughts and modality details', () => {
    expect(usageMetadata(u)).toEqual({
      promptTokenCount: 1030,
      candidatesTokenCount: 200,
      totalTokenCount: 1330,
      cachedContentTokenCount: 400,
      thoughtsTokenCount: 100,
      promptTokensDetails: [
        { modality: 'TEXT', tokenCount: 830 },
        { modality: 'AUDIO', tokenCount: 200 },
      ],
      candidatesTokensDetails: [
        { modality: 'TEXT', tokenCount: 150 },
        { modality: 'AUDIO', tokenCount: 50 },
      ],
    });
  });
});

describe('service tiers that change the price', () => {
  it('are read from OpenAI, Responses and Anthropic; the list-price tiers are not', () => {
    expect(openaiUsage({ prompt_tokens: 1 }, 'priority')?.serviceTier).toBe('priority');
    expect(openaiUsage({ prompt_tokens: 1 }, 'default')).not.toHaveProperty('serviceTier');
    expect(responsesUsage({ input_tokens: 1 }, 'flex')?.serviceTier).toBe('flex');
    expect(takeAnthropicUsage(null, { input_tokens: 1, service_tier: 'priority' }, true)?.serviceTier).toBe('priority');
    expect(takeAnthropicUsage(null, { input_tokens: 1, service_tier: 'standard' }, true)).not.toHaveProperty('serviceTier');
    // A live call is never billed as a batch: the Batch API applies its own discount.
    expect(openaiUsage({ prompt_tokens: 1 }, 'batch')).not.toHaveProperty('serviceTier');
  });
});

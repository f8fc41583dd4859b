import { anthropicToAnthropic } from '@/lib/gateway/translate/anthropic-anthropic';
import { anthropicToGemini } from '@/lib/gateway/translate/anthropic-gemini';
import { anthropicToOpenai } from '@/lib/gateway/translate/anthropic-openai';
import { openaiToAnthropic } from '@/lib/gateway/translate/openai-anthropic';
import { openaiToGemini } from '@/lib/gateway/translate/openai-gemini';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { geminiToAnthropic } from '@/lib/gateway/translate/gemini-anthropic';
import { geminiToGemini } from '@/lib/gateway/translate/gemini-gemini';
import { geminiToOpenai } from '@/lib/gateway/translate/gemini-openai';
import type { GeminiClientOptions } from '@/lib/gateway/translate/gemini-client';
import type { ClientProtocol, Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';

/** The chat translators, by client surface and upstream protocol. */
export const chatTranslators: Readonly<Record<ClientProtocol, Partial<Record<UpstreamProtocol, Translator>>>> = {
  openai: { openai: openaiToOpenai, anthropic: openaiToAnthropic, gemini: openaiToGemini },
  anthropic: { anthropic: anthropicToAnthropic, openai: anthropicToOpenai, gemini: anthropicToGemini },
};

/**
 * The Gemini surface's translators, by upstream protocol: made per request, for what the reply's
 * shape depends on besides the body (the stream's framing, whether thoughts are shown).
 */
export const geminiTranslators: Readonly<Record<UpstreamProtocol, (opts: GeminiClientOptions) => Translator>> = {
  gemini: geminiToGemini,
  openai: geminiToOpenai,
  anthropic: geminiToAnthropic,
};

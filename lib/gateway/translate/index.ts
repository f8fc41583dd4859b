import { anthropicToAnthropic } from '@/lib/gateway/translate/anthropic-anthropic';
import { anthropicToGemini } from '@/lib/gateway/translate/anthropic-gemini';
import { anthropicToOpenai } from '@/lib/gateway/translate/anthropic-openai';
import { openaiToAnthropic } from '@/lib/gateway/translate/openai-anthropic';
import { openaiToGemini } from '@/lib/gateway/translate/openai-gemini';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import type { ClientProtocol, Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';

/** The chat translators, by client surface and upstream protocol. */
export const chatTranslators: Readonly<Record<ClientProtocol, Partial<Record<UpstreamProtocol, Translator>>>> = {
  openai: { openai: openaiToOpenai, anthropic: openaiToAnthropic, gemini: openaiToGemini },
  anthropic: { anthropic: anthropicToAnthropic, openai: anthropicToOpenai, gemini: anthropicToGemini },
};

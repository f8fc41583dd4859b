import type { UpstreamProtocolName as UpstreamProtocol } from '@/lib/config';
import { anthropicProvider } from '@/lib/gateway/providers/anthropic';
import { geminiProvider } from '@/lib/gateway/providers/gemini';
import { openaiProvider } from '@/lib/gateway/providers/openai';
import type { Provider } from '@/lib/gateway/providers/types';

export type { Operation, Provider } from '@/lib/gateway/providers/types';

/** Every upstream protocol a channel may speak. */
export const providers: Readonly<Record<UpstreamProtocol, Provider>> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
};

// A ModelInfo for unit tests of code that reads model facts (translators, pricing).
import type { ModelInfo } from '@/lib/config';

export function modelInfo(overrides: Partial<ModelInfo> = {}): ModelInfo {
  return {
    name: 'test-model',
    ownedBy: 'test',
    kind: 'chat',
    protocol: 'openai',
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    tags: ['chat'],
    inputPrice: 1_000_000n,
    outputPrice: 4_000_000n,
    cacheReadPrice: 100_000n,
    cacheWritePrice: 1_250_000n,
    inputUsdPerMillion: '1',
    outputUsdPerMillion: '4',
    tiers: new Set(['free', 'pro']),
    fallbackModels: [],
    created: 1_700_000_000,
    ...overrides,
  };
}

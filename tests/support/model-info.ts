// A ModelInfo for unit tests (translators, routing): sensible defaults, any field overridden.
import type { ModelInfo } from '@/lib/config';

export function modelInfo(overrides: Partial<ModelInfo> = {}): ModelInfo {
  return {
    name: 'test-model',
    ownedBy: 'test',
    kind: 'chat',
    protocol: 'openai',
    contextWindow: 200_000,
    maxOutputTokens: 8192,
    tags: ['chat'],
    inputPrice: 3_000_000n,
    outputPrice: 15_000_000n,
    cacheReadPrice: 300_000n,
    cacheWritePrice: 3_750_000n,
    inputUsdPerMillion: '3',
    outputUsdPerMillion: '15',
    tiers: new Set(['free', 'pro', 'vip', 'enterprise']),
    fallbackModels: [],
    created: 1_700_000_000,
    toolPrices: {},
    priceModel: { base: { input: 3_000_000n, output: 15_000_000n, cache_read: 300_000n, cache_write_5m: 3_750_000n } },
    ...overrides,
  };
}

import { nestedErrorMessage, type Provider } from '@/lib/gateway/providers/types';

// The channel's base URL includes the version (https://api.openai.com/v1), as OpenAI's SDKs expect.
const paths = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  count_tokens: undefined,
  responses: '/responses',
  responses_compact: '/responses/compact',
} as const;

export const openaiProvider: Provider = {
  protocol: 'openai',
  path: (op) => paths[op],
  auth: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  errorMessage: nestedErrorMessage,
};

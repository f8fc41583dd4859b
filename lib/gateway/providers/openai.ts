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
  // The operator's account out of quota (OpenAI: 429 insufficient_quota) or at its billing limit;
  // a 402 (DeepSeek's "Insufficient Balance", other compatible upstreams) is always the account's.
  keyRefused: (status, body) =>
    status === 402 || ((status === 429 || status === 400) && /"(?:insufficient_quota|billing_hard_limit_reached|billing_not_active)"/.test(body)),
};

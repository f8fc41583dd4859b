import { nestedErrorMessage, type Provider } from '@/lib/gateway/providers/types';

/** Sent when the client gave none (a translated call, or a mirror client that omitted it). */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

// The channel's base URL is the host (https://api.anthropic.com), as Anthropic's SDKs expect.
const paths = {
  chat: '/v1/messages',
  embeddings: undefined,
  count_tokens: '/v1/messages/count_tokens',
  responses: undefined,
  responses_compact: undefined,
} as const;

export const anthropicProvider: Provider = {
  protocol: 'anthropic',
  path: (op) => paths[op],
  auth: (apiKey) => ({ 'x-api-key': apiKey }),
  errorMessage: nestedErrorMessage,
  // "Your credit balance is too low to access the Anthropic API" comes as a 400
  // invalid_request_error; a billing_error names the account's billing too.
  keyRefused: (status, body) => status === 402 || (status === 400 && (/credit balance/i.test(body) || body.includes('"billing_error"'))),
};

import { nestedErrorMessage, type Provider } from '@/lib/gateway/providers/types';

// The channel's base URL is the host (https://generativelanguage.googleapis.com); the API version
// is part of the path, as in Google's REST reference. Streams are asked for as SSE (alt=sse).
export const geminiProvider: Provider = {
  protocol: 'gemini',
  path: (op, model, stream) => {
    const name = encodeURIComponent(model);
    if (op === 'count_tokens') return `/v1beta/models/${name}:countTokens`;
    if (op !== 'chat') return undefined;
    return stream ? `/v1beta/models/${name}:streamGenerateContent?alt=sse` : `/v1beta/models/${name}:generateContent`;
  },
  auth: (apiKey) => ({ 'x-goog-api-key': apiKey }),
  errorMessage: nestedErrorMessage,
  // Google answers an invalid API key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
  // Billing not enabled on the project ("... Please enable billing ...") comes as 400 FAILED_PRECONDITION.
  keyRefused: (status, body) => status === 400 && (body.includes('API_KEY_INVALID') || (body.includes('FAILED_PRECONDITION') && /billing/i.test(body))),
};

// Helpers of the OpenAI-client translator tests (chat -> anthropic, chat -> gemini, responses):
// the request a client sends, a refusal caught, the client chunks expected, and the official SDK
// reading the translator's output.
import OpenAI from 'openai';
import { expect } from 'vitest';
import { GatewayError } from '@/lib/errors';
import type { ClientRequest } from '@/lib/gateway/translate/types';

export function clientReq(json: Record<string, unknown>): ClientRequest {
  const text = JSON.stringify(json);
  return { body: { raw: Buffer.from(text), text, json, verbatim: true }, headers: {} };
}

/** The GatewayError (a 400) that `build` throws. */
export function refusalOf(build: () => unknown): GatewayError {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a 400');
}

/** A chat.completion.chunk maker for one stream: `base` holds its id, created and model. */
export const chunkOf =
  (base: Record<string, unknown>) =>
  (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });

/** An OpenAI SDK client whose fetch answers with `body` (to prove the SDK accepts our output). */
export function sdkAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': contentType } }),
  });
}

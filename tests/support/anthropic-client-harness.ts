// Helpers of the Anthropic-Messages-client translator tests (anthropic -> openai, anthropic -> gemini):
// the request a client sends, the upstream body built from it, a recorded reply or stream run
// through the translator, the events the client should get, and the official SDK reading them.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'vitest';
import { GatewayError } from '@/lib/errors';
import type { JsonObject } from '@/lib/gateway/body';
import type { CallInfo, ClientRequest, Settlement, Translator, UpstreamUsage } from '@/lib/gateway/translate/types';
import { modelInfo } from './model-info';
import { fixture, parseClientSse, sseEvents } from './sse-fixtures';

/** The model these cases were written against (a 16K output cap, below Claude Code's 32K ask). */
export const testModel = (overrides: Parameters<typeof modelInfo>[0] = {}) =>
  modelInfo({
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    inputPrice: 1_000_000n,
    outputPrice: 4_000_000n,
    cacheReadPrice: 100_000n,
    cacheWritePrice: 1_250_000n,
    inputUsdPerMillion: '1',
    outputUsdPerMillion: '4',
    ...overrides,
  });

export function clientReq(json: JsonObject, headers: Record<string, string> = {}): ClientRequest {
  const text = JSON.stringify(json);
  return { body: { raw: Buffer.from(text), text, json, verbatim: true }, headers: { 'anthropic-version': '2023-06-01', ...headers } };
}

export interface HarnessOptions {
  callOf: (stream?: boolean) => CallInfo;
  /** The members every client body of the tests has (model, max_tokens). */
  base: JsonObject;
  /** The folder of tests/fixtures holding the upstream's recorded replies. */
  fixtureDir: string;
  /** The channel name the settlements carry. */
  channel: string;
}

export function anthropicClientHarness(t: Translator, { callOf, base, fixtureDir, channel }: HarnessOptions) {
  /** The upstream body built for a client body. */
  function upstream(json: JsonObject, call = callOf()): JsonObject {
    const out = t.request(clientReq({ ...base, ...json }), call);
    expect(out.headers ?? {}).toEqual({});
    return JSON.parse(String(out.body)) as JsonObject;
  }

  function refusal(json: JsonObject, call = callOf()): GatewayError {
    try {
      t.request(clientReq({ ...base, ...json }), call);
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      return err as GatewayError;
    }
    throw new Error('expected a refusal');
  }

  /** What the pipeline settles from the upstream's usage. */
  function settle(u: UpstreamUsage | null): Settlement {
    const usage = u ?? { promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    return { usage, costUsd: '0.000123', costCny: '0.000886', channel, latencyMs: 321 };
  }

  function reply(name: string, call = callOf()) {
    const r = t.response(fixture(`${fixtureDir}/${name}`), call);
    return { r, body: JSON.parse(r.render(settle(r.usage))) as JsonObject };
  }

  function stream(name: string, call = callOf(true), req = clientReq(base)) {
    const st = t.stream(call, req);
    let out = '';
    for (const ev of sseEvents(fixture(`${fixtureDir}/${name}`))) out += st.push(ev);
    expect(st.finished).toBe(true);
    out += st.end(settle(st.usage));
    return { st, out, events: parseClientSse(out) };
  }

  return { upstream, refusal, settle, reply, stream };
}

/** The Anthropic events a client should receive for the request `requestId`, first `model` by default. */
export function anthropicEvents(requestId: string, defaultModel: string) {
  const messageStart = (model = defaultModel) => ({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: `msg_${requestId}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    },
  });
  const ev = (event: string, data: JsonObject) => ({ event, data: { type: event, ...data } });
  const textDelta = (index: number, text: string) => ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
  const jsonDelta = (index: number, partial_json: string) => ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
  const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  });
  return { messageStart, ev, textDelta, jsonDelta, usage };
}

/** Feeds the client-side bytes through the official SDK's stream parser and accumulator. */
export async function sdkFinalMessage(bytes: string, model: string) {
  const client = new Anthropic({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test/v1/anthropic',
    maxRetries: 0,
    fetch: async () => new Response(bytes, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  return client.messages.stream({ model, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}

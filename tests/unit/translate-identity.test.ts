// The identity pairs (a client on an upstream of its own protocol): OpenAI chat -> OpenAI,
// Anthropic -> Anthropic, Gemini -> Gemini. The body goes upstream as the client's bytes (but for
// what each pair documents it changes), and replies, stream events and errors come back as the
// upstream sent them, read only for usage, the generated text and whether the reply is complete.
import { describe, expect, it } from 'vitest';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { anthropicToAnthropic } from '@/lib/gateway/translate/anthropic-anthropic';
import { geminiToGemini } from '@/lib/gateway/translate/gemini-gemini';
import type { CallInfo, ClientRequest, Settlement, StreamTranslator } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { clientReq } from '../support/openai-client-harness';
import { fixtureText, parseDataStream, sseEvents } from '../support/sse-fixture';

const call = (name: string, protocol: 'openai' | 'anthropic' | 'gemini', stream = false): CallInfo => ({
  model: modelInfo({ name, ownedBy: protocol, protocol }),
  stream,
  requestId: 'req_ident',
  created: 1764120000,
});

const settled: Settlement = {
  usage: { promptTokens: 19, completionTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  costUsd: '0.000123',
  costCny: '0.00088560',
  channel: 'main',
  latencyMs: 321,
};

/** Every event of a recorded stream through `st`: what the client got before end(). */
function relay(st: StreamTranslator, fixture: string): string {
  let out = '';
  for (const ev of sseEvents(fixtureText(fixture))) out += st.push(ev);
  return out;
}

/** The kind of UpstreamFailure `run` throws. */
function failureKind(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamFailure);
    return (err as UpstreamFailure).kind;
  }
  throw new Error('did not throw');
}

describe('OpenAI chat -> OpenAI (identity)', () => {
  const t = openaiToOpenai;
  const c = call('gpt-4o', 'openai');
  const hi = [{ role: 'user', content: 'Hi' }];

  it('sends the client body with the served model, its unknown members kept', () => {
    const body = JSON.parse(String(t.request(clientReq({ model: 'alias', messages: hi, future_field: { x: 1 } }), c).body)) as Record<string, unknown>;
    expect(body).toEqual({ model: 'gpt-4o', messages: hi, future_field: { x: 1 } });
  });

  it('a stream always asks for usage (billing needs it), the client options kept', () => {
    const body = JSON.parse(
      String(t.request(clientReq({ model: 'gpt-4o', messages: hi, stream: true, stream_options: { other: 1 } }), { ...c, stream: true }).body),
    ) as Record<string, unknown>;
    expect(body.stream_options).toEqual({ other: 1, include_usage: true });
  });

  it('a whole reply goes back as it came, with the service member spliced in', () => {
    const text = fixtureText('openai/reply-text.json');
    const reply = t.response(text, c);
    expect(reply.usage).toMatchObject({ promptTokens: 19, completionTokens: 10, cacheReadTokens: 0 });
    expect(reply.completion).toBe('Hello! How can I help you today?');
    const out = JSON.parse(reply.render(settled)) as Record<string, unknown>;
    const { service, ...rest } = out;
    expect(rest).toEqual(JSON.parse(text));
    expect(service).toMatchObject({ cost_usd: 0.000123, channel: 'main' });
  });

  it('a reply in another dialect gets a chatcmpl- id, its object and our usage', () => {
    const reply = t.response(JSON.stringify({ id: 'x1', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }), c);
    expect(reply.usage).toBeNull();
    expect(reply.completion).toBe('ok');
    const out = JSON.parse(reply.render(settled)) as Record<string, unknown>;
    expect(out).toMatchObject({ id: 'chatcmpl-x1', object: 'chat.completion', usage: { prompt_tokens: 19, completion_tokens: 10 } });
  });

  it('a stream passes its chunks as they came; the usage chunk and [DONE] go at the end, priced', () => {
    const req = clientReq({ model: 'gpt-4o', messages: hi, stream: true, stream_options: { include_usage: true } });
    const st = t.stream({ ...c, stream: true }, req);
    const out = relay(st, 'openai/stream-text.sse');
    expect(st.finished).toBe(true);
    expect(st.usage).toMatchObject({ promptTokens: 19, completionTokens: 10 });
    expect(st.completion).toBe('Hello! How can I help you today?');
    const before = parseDataStream(out);
    expect(before.done).toBe(false);
    expect(before.chunks.every((ch) => Array.isArray(ch.choices) && ch.choices.length > 0)).toBe(true);
    const all = parseDataStream(out + st.end(settled));
    expect(all.done).toBe(true);
    expect(all.chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 19, completion_tokens: 10 } });
  });

  it('a client that did not ask for the usage chunk gets none', () => {
    const st = t.stream({ ...c, stream: true }, clientReq({ model: 'gpt-4o', messages: hi, stream: true }));
    const all = parseDataStream(relay(st, 'openai/stream-text.sse') + st.end(settled));
    expect(all.done).toBe(true);
    expect(all.chunks.some((ch) => ch.usage)).toBe(false);
  });

  it('an error inside the stream is the upstream failing', () => {
    expect(failureKind(() => t.stream(c, clientReq({ messages: hi })).push({ event: 'message', data: '{"error":{"message":"overloaded"}}', raw: '' }))).toBe(
      'status',
    );
  });

  it('an error body goes back unchanged; an empty one gets the OpenAI envelope', () => {
    const text = '{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}';
    expect(t.error(400, text)).toEqual({ status: 400, body: text });
    expect(JSON.parse(t.error(404, '').body)).toMatchObject({ error: { message: 'upstream answered 404', code: 'upstream_rejected' } });
  });
});

describe('Anthropic -> Anthropic (identity)', () => {
  const t = anthropicToAnthropic;
  const c = call('claude-sonnet-4-5', 'anthropic');
  const req = (headers: Record<string, string> = {}): ClientRequest => ({
    ...clientReq({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    headers,
  });

  it('forwards the caller’s anthropic-version and anthropic-beta; a beta makes a 403 the caller’s', () => {
    const plain = t.request(req(), c);
    expect(plain.headers?.['anthropic-version']).toBeTruthy();
    expect(plain.forbiddenIsCallers).toBe(false);
    const beta = t.request(req({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' }), c);
    expect(beta.headers).toEqual({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' });
    expect(beta.forbiddenIsCallers).toBe(true);
  });

  it('drops thinking blocks Anthropic did not sign (from another protocol’s reply)', () => {
    const messages = [
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hm', signature: '' },
          { type: 'text', text: 'Hello' },
        ],
      },
      { role: 'user', content: 'Again' },
    ];
    const body = JSON.parse(String(t.request(clientReq({ model: 'claude-sonnet-4-5', max_tokens: 10, messages }), c).body)) as { messages: unknown[] };
    expect(body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Hello' }] });
  });

  it('a whole reply goes back byte for byte, read for usage and text', () => {
    const text = fixtureText('anthropic/text.json');
    const reply = t.response(text, c);
    expect(reply.render(settled)).toBe(text);
    expect(reply.usage).not.toBeNull();
    expect(reply.usage!.completionFinal).toBe(true);
    const parsed = JSON.parse(text) as { content: { text?: string }[] };
    expect(reply.completion).toBe(parsed.content.map((b) => b.text ?? '').join(''));
  });

  it('a stream goes back event by event as it came, complete at message_stop', () => {
    const st = t.stream({ ...c, stream: true }, req());
    const text = fixtureText('anthropic/text.sse');
    const out = relay(st, 'anthropic/text.sse');
    expect(out).toBe(
      sseEvents(text)
        .map((e) => e.raw)
        .join(''),
    );
    expect(st.finished).toBe(true);
    expect(st.usage).not.toBeNull();
    expect(st.completion.length).toBeGreaterThan(0);
    expect(st.end(settled)).toBe('');
  });

  it('an error event is the upstream failing', () => {
    expect(
      failureKind(() =>
        t.stream(c, req()).push({ event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', raw: '' }),
      ),
    ).toBe('status');
  });

  it('an error body goes back unchanged; an empty one gets the Anthropic envelope', () => {
    const text = fixtureText('anthropic/error.json');
    expect(t.error(400, text)).toEqual({ status: 400, body: text });
    expect(JSON.parse(t.error(404, '').body)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'upstream answered 404' } });
  });
});

describe('Gemini -> Gemini (identity)', () => {
  const c = call('gemini-2.5-flash', 'gemini');
  const t = geminiToGemini({ framing: 'sse', includeThoughts: false });
  const contents = [{ role: 'user', parts: [{ text: 'Hi' }] }];

  it('sends the client’s bytes; a Claude thought signature becomes Google’s placeholder', () => {
    const req = clientReq({ contents, safetySettings: [{ category: 'X', threshold: 'BLOCK_NONE' }] });
    expect(t.request(req, c).body).toBe(req.body.raw);
    const foreign = clientReq({ contents: [...contents, { role: 'model', parts: [{ text: 'ok', thoughtSignature: 'anthropic:abc' }] }] });
    const body = JSON.parse(String(t.request(foreign, c).body)) as { contents: { parts: { thoughtSignature?: string }[] }[] };
    expect(body.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
  });

  it('a whole reply goes back byte for byte, read for usage and text', () => {
    const text = fixtureText('gemini/reply-text.json');
    const reply = t.response(text, c);
    expect(reply.render(settled)).toBe(text);
    expect(reply.usage).toMatchObject({ promptTokens: 7 });
    expect(reply.completion).toContain('Hello! How can I help you today?');
  });

  it('an error inside a 200 is the upstream failing', () => {
    expect(failureKind(() => t.response('{"error":{"code":500,"message":"internal","status":"INTERNAL"}}', c))).toBe('status');
  });

  it('an SSE stream goes back event by event; framed as an array, it is one JSON array', () => {
    const st = t.stream({ ...c, stream: true }, clientReq({ contents }));
    const text = fixtureText('gemini/stream-text.sse');
    expect(relay(st, 'gemini/stream-text.sse')).toBe(
      sseEvents(text)
        .map((e) => e.raw)
        .join(''),
    );
    expect(st.finished).toBe(true);
    expect(st.usage).not.toBeNull();

    const arr = geminiToGemini({ framing: 'array', includeThoughts: false }).stream({ ...c, stream: true }, clientReq({ contents }));
    const framed = JSON.parse(relay(arr, 'gemini/stream-text.sse') + arr.end(settled)) as unknown[];
    expect(framed).toEqual(sseEvents(text).map((e) => JSON.parse(e.data) as unknown));
  });

  it('an error body goes back unchanged; an empty one gets Google’s envelope', () => {
    const text = '{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}';
    expect(t.error(400, text)).toEqual({ status: 400, body: text });
    expect(JSON.parse(t.error(404, '').body)).toEqual({ error: { code: 404, message: 'upstream answered 404', status: 'INVALID_ARGUMENT' } });
  });
});

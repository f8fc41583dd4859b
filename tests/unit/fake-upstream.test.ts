import { describe, it, expect, beforeAll, afterAll, beforeEach } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream, countTokens, CACHE_TOKENS, DEFAULT_REPLY, GEMINI_THOUGHT, TOOL_CALL_ARGUMENTS, type FakeUpstream } from '../support/fake-upstream';

let fake: FakeUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  fake = await startFakeUpstream({ dims: { 'tiny-embed': 8 } });
  openai = new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'x', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: fake.url, apiKey: 'x', maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

async function collectOpenAIStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  let text = '';
  for await (const c of stream) {
    chunks.push(c);
    text += c.choices[0]?.delta?.content ?? '';
  }
  return { chunks, text };
}

function rawPost(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(fake.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const user = (content: string) => [{ role: 'user' as const, content }];

describe('fake upstream: OpenAI chat completions', () => {
  it('answers non-stream with the reply and deterministic usage, and records the request', async () => {
    const r = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: user('Hi there') });
    expect(r.object).toBe('chat.completion');
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.model).toBe('gpt-4o-mini');
    expect(r.choices[0]!.message).toMatchObject({ role: 'assistant', content: DEFAULT_REPLY });
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.choices[0]!.logprobs).toBeNull();
    expect(r.usage).toEqual({
      prompt_tokens: countTokens('Hi there') + 3,
      completion_tokens: countTokens(DEFAULT_REPLY),
      total_tokens: countTokens('Hi there') + 3 + countTokens(DEFAULT_REPLY),
    });
    expect(fake.requests).toHaveLength(1);
    const rec = fake.requests[0]!;
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBe('Bearer x');
    expect(rec.json).toMatchObject({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi there' }] });
  });

  it('records the raw body byte-exact', async () => {
    const raw = '{ "model" :"gpt-4o-mini",\n  "messages": [{"role":"user","content":"h\\u00e9llo ünï"}] }  ';
    const res = await rawPost('/v1/chat/completions', raw);
    expect(res.status).toBe(200);
    expect(fake.requests[0]!.body).toBe(raw);
    expect(fake.requests[0]!.json).toEqual(JSON.parse(raw));
  });

  it('streams chunks whose deltas concatenate to the reply, with usage when asked', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: user('Hi'),
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text } = await collectOpenAIStream(stream);
    expect(text).toBe(DEFAULT_REPLY);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const contentChunks = chunks.filter((c) => (c.choices[0]?.delta?.content ?? '') !== '');
    expect(contentChunks.length).toBeGreaterThanOrEqual(3);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish!.choices[0]!.finish_reason).toBe('stop');
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: countTokens(DEFAULT_REPLY) });
  });

  it('streams without a usage chunk when include_usage is not set, and ends with [DONE]', async () => {
    const res = await rawPost('/v1/chat/completions', { model: 'm', messages: user('Hi'), stream: true });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const body = await res.text();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(body).not.toContain('"usage"');
  });

  it('setReply, ECHO:, json_object, max_tokens truncation', async () => {
    fake.setReply('Custom reply here');
    let r = await openai.chat.completions.create({ model: 'm', messages: user('x') });
    expect(r.choices[0]!.message.content).toBe('Custom reply here');
    r = await openai.chat.completions.create({ model: 'm', messages: user('please ECHO: repeat me') });
    expect(r.choices[0]!.message.content).toBe('repeat me');
    r = await openai.chat.completions.create({ model: 'm', messages: user('json'), response_format: { type: 'json_object' } });
    expect(JSON.parse(r.choices[0]!.message.content!)).toEqual({ answer: 'ok' });
    fake.reset();
    r = await openai.chat.completions.create({ model: 'm', messages: user('x'), max_tokens: 2 });
    expect(r.choices[0]!.message.content).toBe('Hello from');
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(2);
  });

  it('answers with a tool call, then uses the tool result', async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const r = await openai.chat.completions.create({ model: 'm', messages: user('Weather?'), tools });
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    const msg = r.choices[0]!.message;
    expect(msg.content).toBeNull();
    const call = msg.tool_calls![0]!;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    if (call.type !== 'function') throw new Error('expected function call');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });

    const r2 = await openai.chat.completions.create({
      model: 'm',
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        msg as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam,
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
      ],
    });
    expect(r2.choices[0]!.message.content).toBe('The tool said: sunny, 21C');

    const none = await openai.chat.completions.create({ model: 'm', messages: user('Weather?'), tools, tool_choice: 'none' });
    expect(none.choices[0]!.message.content).toBe(DEFAULT_REPLY);
  });

  it('streams a tool call that the SDK can reassemble', async () => {
    const stream = openai.chat.completions.stream({
      model: 'm',
      messages: user('Weather?'),
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    const call = final.choices[0]!.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('validates like OpenAI', async () => {
    const err = await openai.chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: null });
    const res = await rawPost('/v1/chat/completions', { model: 'm' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { param: 'messages', type: 'invalid_request_error', code: null } });
    const noAuth = await fetch(fake.url + '/v1/chat/completions', { method: 'POST', body: '{}' });
    expect(noAuth.status).toBe(401);
  });
});

describe('fake upstream: OpenAI embeddings and models', () => {
  it('returns float embeddings of the configured dims, deterministic', async () => {
    const r = await openai.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' });
    expect(r.object).toBe('list');
    expect(r.model).toBe('text-embedding-3-small');
    expect(r.data).toHaveLength(2);
    expect(r.data[0]!.embedding).toHaveLength(1536);
    expect(r.data[1]!.index).toBe(1);
    expect(r.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    const again = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'a', encoding_format: 'float' });
    expect(again.data[0]!.embedding).toEqual(r.data[0]!.embedding);
    expect(r.data[0]!.embedding).not.toEqual(r.data[1]!.embedding);
  });

  it('returns base64 (SDK default) that decodes to the same vector', async () => {
    const r = await openai.embeddings.create({ model: 'tiny-embed', input: 'hello' });
    expect((fake.requests[0]!.json as { encoding_format?: string }).encoding_format).toBe('base64');
    expect(r.data[0]!.embedding).toHaveLength(8);
    const f = await openai.embeddings.create({ model: 'tiny-embed', input: 'hello', encoding_format: 'float' });
    expect(r.data[0]!.embedding).toEqual(f.data[0]!.embedding);
    const d = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hello', dimensions: 64 });
    expect(d.data[0]!.embedding).toHaveLength(64);
  });

  it('lists models in OpenAI and Anthropic shapes', async () => {
    const list = await openai.models.list();
    expect(list.data.length).toBeGreaterThanOrEqual(2);
    expect(list.data[0]).toMatchObject({ object: 'model' });
    const alist = await anthropic.models.list();
    expect(alist.data.length).toBeGreaterThanOrEqual(2);
    expect(alist.data[0]).toMatchObject({ type: 'model' });
    expect(typeof alist.data[0]!.display_name).toBe('string');
    const raw = await fetch(fake.url + '/v1/models', { headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'x' } });
    expect(await raw.json()).toMatchObject({ has_more: false, first_id: 'claude-sonnet-4-6' });
  });
});

describe('fake upstream: Anthropic messages', () => {
  it('answers non-stream in the Anthropic shape', async () => {
    const m = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: user('Hi there') });
    expect(m.type).toBe('message');
    expect(m.id).toMatch(/^msg_/);
    expect(m.model).toBe('claude-sonnet-4-6');
    expect(m.content).toEqual([{ type: 'text', text: DEFAULT_REPLY }]);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.stop_sequence).toBeNull();
    expect(m.usage).toMatchObject({
      input_tokens: countTokens('Hi there') + 3,
      output_tokens: countTokens(DEFAULT_REPLY),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const rec = fake.requests[0]!;
    expect(rec.path).toBe('/v1/messages');
    // @anthropic-ai/sdk 1.x sends the apiKey as `Authorization: Bearer`; raw callers use `x-api-key`
    expect(rec.headers['x-api-key'] ?? rec.headers.authorization).toMatch(/^(Bearer )?x$/);
    expect(rec.headers['anthropic-version']).toBeTruthy();
  });

  it('requires anthropic-version and x-api-key', async () => {
    let res = await fetch(fake.url + '/v1/messages', { method: 'POST', headers: { 'x-api-key': 'x' }, body: '{}' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    res = await fetch(fake.url + '/v1/messages', { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const err = await anthropic.messages.create({ model: 'c', max_tokens: 10, messages: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('streams with messages.stream(): finalText equals the reply, usage has cache fields', async () => {
    const params = {
      model: 'claude-sonnet-4-6',
      max_tokens: 100,
      system: [{ type: 'text' as const, text: 'You are a cached system prompt.', cache_control: { type: 'ephemeral' as const } }],
      messages: user('Hi'),
    };
    const events: string[] = [];
    const stream = anthropic.messages.stream(params);
    stream.on('streamEvent', (e) => events.push(e.type));
    expect(await stream.finalText()).toBe(DEFAULT_REPLY);
    const final = await stream.finalMessage();
    expect(final.usage).toMatchObject({
      output_tokens: countTokens(DEFAULT_REPLY),
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 0,
    });
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(events.filter((e) => e === 'content_block_delta').length).toBeGreaterThanOrEqual(3);

    const second = await anthropic.messages.create(params);
    expect(second.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 100 });

    const res = await fetch(fake.url + '/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'x', 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, stream: true }),
    });
    const text = await res.text();
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it('tool_use and tool_result', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }];
    const m = await anthropic.messages.create({ model: 'c', max_tokens: 100, tools, messages: user('Weather?') });
    expect(m.stop_reason).toBe('tool_use');
    const block = m.content[0]!;
    if (block.type !== 'tool_use') throw new Error('expected tool_use');
    expect(block).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    const m2 = await anthropic.messages.create({
      model: 'c',
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: m.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: block.id, content: 'sunny' }] },
      ],
    });
    expect(m2.content).toEqual([{ type: 'text', text: 'The tool said: sunny' }]);
    const streamed = await anthropic.messages.stream({ model: 'c', max_tokens: 100, tools, messages: user('Weather?') }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
  });

  it('count_tokens', async () => {
    const r = await anthropic.messages.countTokens({ model: 'c', messages: user('Hi there'), system: 'sys' });
    expect(r.input_tokens).toBe(countTokens('Hi there') + 3 + countTokens('sys') + 3);
  });

  it('status faults use the Anthropic envelope', async () => {
    fake.queue({ type: 'status', status: 529 }, { type: 'status', status: 429, headers: { 'retry-after': '7' } });
    const e1 = await anthropic.messages.create({ model: 'c', max_tokens: 10, messages: user('x') }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(Anthropic.APIError);
    expect((e1 as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((e1 as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const e2 = await anthropic.messages.create({ model: 'c', max_tokens: 10, messages: user('x') }).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(Anthropic.RateLimitError);
    expect((e2 as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toBe('7');
  });

  it('cut makes the Anthropic stream fail; no-done ends before message_stop', async () => {
    fake.queue({ type: 'cut', afterChunks: 4 });
    const s = anthropic.messages.stream({ model: 'c', max_tokens: 100, messages: user('x') });
    await expect(s.finalText()).rejects.toThrow();

    fake.queue({ type: 'no-done' });
    const res = await fetch(fake.url + '/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'x' },
      body: JSON.stringify({ model: 'c', max_tokens: 100, messages: user('x'), stream: true }),
    });
    const text = await res.text();
    expect(text).toContain('event: message_delta');
    expect(text).not.toContain('message_stop');
  });
});

describe('fake upstream: faults', () => {
  it('a queued 500 gives InternalServerError, then the queue drains', async () => {
    fake.queue({ type: 'status', status: 500 });
    const err = await openai.chat.completions.create({ model: 'm', messages: user('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(500);
    const ok = await openai.chat.completions.create({ model: 'm', messages: user('x') });
    expect(ok.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    expect(fake.requests).toHaveLength(2);
  });

  it('429 with retry-after and a custom body; setDefault applies until reset', async () => {
    fake.setDefault({
      type: 'status',
      status: 429,
      headers: { 'retry-after': '2' },
      body: { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
    });
    for (let i = 0; i < 2; i++) {
      const err = await openai.chat.completions.create({ model: 'm', messages: user('x') }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('2');
      expect((err as Error).message).toContain('slow down');
    }
    fake.reset();
    await expect(openai.chat.completions.create({ model: 'm', messages: user('x') })).resolves.toBeTruthy();
  });

  it('x-fake-fault header takes precedence over the queue', async () => {
    fake.queue({ type: 'status', status: 500 });
    const err = await openai.chat.completions
      .create({ model: 'm', messages: user('x') }, { headers: { 'x-fake-fault': JSON.stringify({ type: 'status', status: 400 }) } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    // queue still holds the 500
    await expect(openai.chat.completions.create({ model: 'm', messages: user('x') })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('cut makes the OpenAI stream iteration throw after N chunks', async () => {
    fake.queue({ type: 'cut', afterChunks: 2 });
    const stream = await openai.chat.completions.create({ model: 'm', messages: user('x'), stream: true });
    let got = 0;
    await expect(
      (async () => {
        for await (const _ of stream) got++;
      })(),
    ).rejects.toThrow();
    expect(got).toBe(2);
  });

  it('no-done: all chunks but no [DONE]', async () => {
    fake.queue({ type: 'no-done' });
    const res = await rawPost('/v1/chat/completions', { model: 'm', messages: user('x'), stream: true, stream_options: { include_usage: true } });
    const text = await res.text();
    expect(text).toContain('"usage":{');
    expect(text).toContain('"finish_reason":"stop"');
    expect(text).not.toContain('[DONE]');
  });

  it('stall: N chunks then silence until the client aborts', async () => {
    fake.queue({ type: 'stall', afterChunks: 2 });
    const ac = new AbortController();
    const stream = await openai.chat.completions.create({ model: 'm', messages: user('x'), stream: true }, { signal: ac.signal });
    let got = 0;
    const t = setTimeout(() => ac.abort(), 300);
    const t0 = Date.now();
    // the SDK ends the iteration quietly when its signal aborts
    await (async () => {
      for await (const _ of stream) got++;
    })().catch(() => undefined);
    clearTimeout(t);
    expect(ac.signal.aborted).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(got).toBe(2);
  });

  it('refuse destroys the socket; hang never answers; delay waits', async () => {
    fake.queue({ type: 'refuse' });
    await expect(openai.chat.completions.create({ model: 'm', messages: user('x') })).rejects.toBeInstanceOf(OpenAI.APIConnectionError);

    fake.queue({ type: 'hang' });
    const quick = new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'x', maxRetries: 0, timeout: 300 });
    await expect(quick.chat.completions.create({ model: 'm', messages: user('x') })).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);

    fake.queue({ type: 'delay', ms: 200 });
    const t0 = Date.now();
    const r = await openai.chat.completions.create({ model: 'm', messages: user('x') });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(r.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    expect(fake.requests).toHaveLength(3);
  });

  it('malformed: invalid JSON body / invalid data: line', async () => {
    fake.queue({ type: 'malformed' });
    let res = await rawPost('/v1/chat/completions', { model: 'm', messages: user('x') });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe('{"id": "chatcmpl-');
    expect(() => JSON.parse(body)).toThrow();

    fake.queue({ type: 'malformed' });
    // logLevel 'off': the SDK would otherwise log the unparseable line
    const quiet = new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'x', maxRetries: 0, logLevel: 'off' });
    const stream = await quiet.chat.completions.create({ model: 'm', messages: user('x'), stream: true });
    await expect(collectOpenAIStream(stream)).rejects.toThrow();

    fake.queue({ type: 'malformed' });
    res = await fetch(fake.url + '/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'x' },
      body: JSON.stringify({ model: 'c', max_tokens: 10, messages: user('x') }),
    });
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });

  it('huge: content of N bytes with consistent usage (stream and non-stream)', async () => {
    const bytes = 300_000;
    fake.queue({ type: 'huge', bytes });
    const r = await openai.chat.completions.create({ model: 'm', messages: user('x') });
    expect(r.choices[0]!.message.content).toHaveLength(bytes);
    expect(r.usage!.completion_tokens).toBe(countTokens('x'.repeat(bytes)));
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);

    fake.queue({ type: 'huge', bytes });
    const { text } = await collectOpenAIStream(await openai.chat.completions.create({ model: 'm', messages: user('x'), stream: true }));
    expect(text).toBe('x'.repeat(bytes));

    fake.queue({ type: 'huge', bytes: 5000 });
    const a = await anthropic.messages.stream({ model: 'c', max_tokens: 100_000, messages: user('x') }).finalText();
    expect(a).toBe('x'.repeat(5000));
  });

  it('no-usage omits usage everywhere', async () => {
    fake.queue({ type: 'no-usage' });
    const r = await openai.chat.completions.create({ model: 'm', messages: user('x') });
    expect(r.usage).toBeUndefined();
    fake.queue({ type: 'no-usage' });
    const { chunks } = await collectOpenAIStream(
      await openai.chat.completions.create({ model: 'm', messages: user('x'), stream: true, stream_options: { include_usage: true } }),
    );
    expect(chunks.some((c) => c.usage)).toBe(false);
    fake.queue({ type: 'no-usage' });
    const e = await openai.embeddings.create({ model: 'tiny-embed', input: 'x', encoding_format: 'float' });
    expect(e.usage).toBeUndefined();
    fake.queue({ type: 'no-usage' });
    const m = await anthropic.messages.create({ model: 'c', max_tokens: 10, messages: user('x') });
    expect(m.usage).toBeUndefined();
  });

  it('close() ends hanging and stalled requests and tracks keep-alive sockets', async () => {
    const f2 = await startFakeUpstream({ chunkDelayMs: 50 });
    f2.queue({ type: 'hang' }, { type: 'stall', afterChunks: 1 }, { type: 'delay', ms: 60_000 });
    const post = (stream: boolean) =>
      fetch(f2.url + '/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer x' },
        body: JSON.stringify({ model: 'm', messages: user('x'), stream }),
      });
    const hung = post(false).catch((e: unknown) => e);
    const stalled = await post(true);
    const stalledBody = stalled.text().catch((e: unknown) => e);
    const delayed = post(false).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    expect(f2.openConnections()).toBe(3);
    const t0 = Date.now();
    await f2.close();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await hung).toBeInstanceOf(Error);
    expect(await stalledBody).toBeInstanceOf(Error);
    expect(await delayed).toBeInstanceOf(Error);
    expect(f2.openConnections()).toBe(0);
  });
});

type GeminiReply = {
  candidates?: { content: { role: string; parts: Record<string, unknown>[] }; finishReason?: string; index: number }[];
  usageMetadata?: Record<string, number | unknown>;
  modelVersion: string;
  responseId: string;
};
type GeminiErr = { error: { code: number; message: string; status: string; details?: unknown[] } };

function geminiPost(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': 'AIza-test' }) {
  return fetch(fake.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
const generate = (model: string, body: unknown, headers?: Record<string, string>) => geminiPost(`/v1beta/models/${model}:generateContent`, body, headers);
const streamSse = (model: string, body: unknown) => geminiPost(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, body);
const userTurn = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

/** Events of a Gemini SSE body; separators must be CRLF CRLF, as Google sends them. */
function geminiEvents(text: string): GeminiReply[] {
  expect(text.endsWith('\r\n\r\n')).toBe(true);
  return text
    .split('\r\n\r\n')
    .filter((e) => e !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return JSON.parse(e.slice('data: '.length)) as GeminiReply;
    });
}

describe('fake upstream: Gemini', () => {
  const weather = {
    functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
  };

  it('answers generateContent with candidates and usageMetadata, and records the request', async () => {
    const res = await generate('gemini-2.5-flash', { ...userTurn('Hi there'), systemInstruction: { parts: [{ text: 'sys' }] } });
    expect(res.status).toBe(200);
    const r = (await res.json()) as GeminiReply;
    const prompt = countTokens('Hi there') + 3 + countTokens('sys') + 3;
    expect(r).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: DEFAULT_REPLY }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: prompt,
        candidatesTokenCount: countTokens(DEFAULT_REPLY),
        totalTokenCount: prompt + countTokens(DEFAULT_REPLY),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
      },
      modelVersion: 'gemini-2.5-flash',
    });
    expect(r.usageMetadata).not.toHaveProperty('thoughtsTokenCount');
    expect(r.usageMetadata).not.toHaveProperty('cachedContentTokenCount');
    expect(typeof r.responseId).toBe('string');
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/v1beta/models/gemini-2.5-flash:generateContent' });
    expect(fake.requests[0]!.headers['x-goog-api-key']).toBe('AIza-test');
  });

  it('authenticates like Google: 403 with no key, 401 for a bearer token, 400 API_KEY_INVALID for a bad key; ?key= works', async () => {
    let res = await generate('gemini-2.5-flash', userTurn('x'), {});
    expect(res.status).toBe(403);
    expect(((await res.json()) as GeminiErr).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
    res = await generate('gemini-2.5-flash', userTurn('x'), { authorization: 'Bearer ya29.x' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as GeminiErr).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    res = await generate('gemini-2.5-flash', userTurn('x'), { 'x-goog-api-key': 'invalid-key' });
    expect(res.status).toBe(400);
    const bad = (await res.json()) as GeminiErr;
    expect(bad.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
    expect(bad.error.details).toContainEqual(expect.objectContaining({ reason: 'API_KEY_INVALID' }));
    res = await geminiPost('/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-q', userTurn('x'), {});
    expect(res.status).toBe(200);
  });

  it('validates like Google: contents, roles, parts, unknown fields, function turns, signatures', async () => {
    const cases: [string, unknown, string][] = [
      ['gemini-2.5-flash', {}, '* GenerateContentRequest.contents: contents is not specified\n'],
      ['gemini-2.5-flash', { contents: [] }, '* GenerateContentRequest.contents: contents is not specified\n'],
      ['gemini-2.5-flash', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'Please use a valid role: user, model.'],
      ['gemini-2.5-flash', { contents: [{ role: 'user', parts: [] }] }, '* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n'],
      ['gemini-2.5-flash', { ...userTurn('x'), max_tokens: 5 }, 'Invalid JSON payload received. Unknown name "max_tokens": Cannot find field.'],
      [
        'gemini-2.5-flash',
        { ...userTurn('x'), generationConfig: { maxTokens: 5 } },
        `Invalid JSON payload received. Unknown name "maxTokens" at 'generation_config': Cannot find field.`,
      ],
      [
        'gemini-2.5-flash',
        { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] },
        'Please ensure that function response turn comes immediately after a function call turn.',
      ],
      [
        'gemini-2.5-flash',
        {
          contents: [
            { role: 'user', parts: [{ text: 'x' }] },
            { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'f', args: {} } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
          ],
        },
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      ],
      [
        'gemini-2.5-flash',
        {
          contents: [
            { role: 'user', parts: [{ text: 'x' }] },
            { role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'EqQB!claude' }] },
          ],
        },
        `Invalid value at 'contents[1].parts[0].thought_signature' (TYPE_BYTES), Base64 decoding failed for "EqQB!claude"`,
      ],
    ];
    for (const [model, body, message] of cases) {
      const res = await generate(model, body);
      expect(res.status).toBe(400);
      expect((await res.json()) as GeminiErr).toEqual({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    }
    // Gemini 3 wants the thought signature of a replayed function call; Google's stand-in passes.
    const replay = (part: Record<string, unknown>) => ({
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} }, ...part }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } }] },
      ],
    });
    let res = await generate('gemini-3-pro-preview', replay({}));
    expect(res.status).toBe(400);
    expect(((await res.json()) as GeminiErr).error.message).toMatch(/^Function call is missing a thought_signature/);
    res = await generate('gemini-3-pro-preview', replay({ thoughtSignature: 'skip_thought_signature_validator' }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as GeminiReply).candidates![0]!.content.parts).toEqual([{ text: 'The tool said: {"result":"sunny"}' }]);
    // snake_case names are proto JSON too
    res = await generate('gemini-2.5-flash', { ...userTurn('x'), system_instruction: { parts: [{ text: 's' }] }, generation_config: { max_output_tokens: 2 } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as GeminiReply).candidates![0]).toMatchObject({ content: { parts: [{ text: 'Hello from' }] }, finishReason: 'MAX_TOKENS' });
  });

  it('streams with alt=sse: CRLF separators, whole responses with new parts, cumulative usage (the last counts)', async () => {
    const res = await streamSse('gemini-2.5-flash', userTurn('Hi'));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = geminiEvents(await res.text());
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.map((e) => e.candidates![0]!.content.parts.map((p) => p.text).join('')).join('')).toBe(DEFAULT_REPLY);
    expect(events.slice(0, -1).every((e) => e.candidates![0]!.finishReason === undefined)).toBe(true);
    expect(events.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    const counts = events.map((e) => e.usageMetadata!.candidatesTokenCount as number);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(events.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: countTokens('Hi') + 3, candidatesTokenCount: countTokens(DEFAULT_REPLY) });
    expect(new Set(events.map((e) => e.responseId)).size).toBe(1);
  });

  it('answers tools with one whole functionCall part and finishReason STOP, then uses the function response', async () => {
    const r = (await (await generate('gemini-2.5-flash', { ...userTurn('Weather?'), tools: [weather] })).json()) as GeminiReply;
    expect(r.candidates![0]).toMatchObject({
      content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: JSON.parse(TOOL_CALL_ARGUMENTS) } }] },
      finishReason: 'STOP',
    });
    expect(r.candidates![0]!.content.parts[0]).not.toHaveProperty('thoughtSignature');
    const events = geminiEvents(await (await streamSse('gemini-2.5-flash', { ...userTurn('Weather?'), tools: [weather] })).text());
    expect(events).toHaveLength(1);
    expect(events[0]!.candidates![0]).toMatchObject({ content: { parts: [{ functionCall: { name: 'get_weather' } }] }, finishReason: 'STOP' });
    // toolConfig NONE answers in text; allowedFunctionNames picks the function
    const none = (await (
      await generate('gemini-2.5-flash', { ...userTurn('x'), tools: [weather], toolConfig: { functionCallingConfig: { mode: 'NONE' } } })
    ).json()) as GeminiReply;
    expect(none.candidates![0]!.content.parts).toEqual([{ text: DEFAULT_REPLY }]);
    const two = { functionDeclarations: [...weather.functionDeclarations, { name: 'get_time' }] };
    const named = (await (
      await generate('gemini-2.5-flash', {
        ...userTurn('x'),
        tools: [two],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } },
      })
    ).json()) as GeminiReply;
    expect(named.candidates![0]!.content.parts[0]).toMatchObject({ functionCall: { name: 'get_time' } });
  });

  it('thinking: thought parts when includeThoughts, thoughtsTokenCount whenever it thinks, a signature on the function call', async () => {
    const r = (await (
      await generate('gemini-2.5-pro', { ...userTurn('Hi'), generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } })
    ).json()) as GeminiReply;
    expect(r.candidates![0]!.content.parts).toEqual([{ text: GEMINI_THOUGHT, thought: true }, { text: DEFAULT_REPLY }]);
    const thoughts = countTokens(GEMINI_THOUGHT);
    expect(r.usageMetadata).toMatchObject({ thoughtsTokenCount: thoughts, totalTokenCount: countTokens('Hi') + 3 + countTokens(DEFAULT_REPLY) + thoughts });
    const hidden = (await (
      await generate('gemini-2.5-pro', { ...userTurn('Hi'), generationConfig: { thinkingConfig: { thinkingBudget: -1 } } })
    ).json()) as GeminiReply;
    expect(hidden.candidates![0]!.content.parts).toEqual([{ text: DEFAULT_REPLY }]);
    expect(hidden.usageMetadata!.thoughtsTokenCount).toBe(thoughts);
    const events = geminiEvents(
      await (
        await streamSse('gemini-2.5-pro', { ...userTurn('Hi'), tools: [weather], generationConfig: { thinkingConfig: { includeThoughts: true } } })
      ).text(),
    );
    expect(events[0]!.candidates![0]!.content.parts).toEqual([{ text: GEMINI_THOUGHT, thought: true }]);
    const call = events[1]!.candidates![0]!.content.parts[0]!;
    expect(call.thoughtSignature).toMatch(/^[A-Za-z0-9+/]+=*$/);
  });

  it('a request reusing a cachedContent reports cachedContentTokenCount within the prompt count', async () => {
    const r = (await (await generate('gemini-2.5-flash', { ...userTurn('Hi'), cachedContent: 'cachedContents/abc123' })).json()) as GeminiReply;
    expect(r.usageMetadata).toMatchObject({ promptTokenCount: countTokens('Hi') + 3 + CACHE_TOKENS, cachedContentTokenCount: CACHE_TOKENS });
  });

  it('faults: status in the Google envelope, cut, no-done, malformed, no-usage, huge', async () => {
    fake.queue({ type: 'status', status: 429 });
    let res = await generate('gemini-2.5-flash', userTurn('x'));
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } });
    fake.queue({ type: 'status', status: 503 });
    expect(((await (await generate('gemini-2.5-flash', userTurn('x'))).json()) as GeminiErr).error.status).toBe('UNAVAILABLE');

    fake.queue({ type: 'cut', afterChunks: 1 });
    res = await streamSse('gemini-2.5-flash', userTurn('x'));
    await expect(res.text()).rejects.toThrow();

    fake.queue({ type: 'no-done' });
    const partial = geminiEvents(await (await streamSse('gemini-2.5-flash', userTurn('x'))).text());
    expect(partial.some((e) => e.candidates![0]!.finishReason)).toBe(false);

    fake.queue({ type: 'malformed' });
    const text = await (await streamSse('gemini-2.5-flash', userTurn('x'))).text();
    expect(() => geminiEvents(text)).toThrow();

    fake.queue({ type: 'no-usage' });
    const bare = geminiEvents(await (await streamSse('gemini-2.5-flash', userTurn('x'))).text());
    expect(bare.some((e) => e.usageMetadata)).toBe(false);

    fake.queue({ type: 'huge', bytes: 40_000 });
    const huge = (await (await generate('gemini-2.5-flash', userTurn('x'))).json()) as GeminiReply;
    expect(huge.candidates![0]!.content.parts[0]!.text).toBe('x'.repeat(40_000));
    expect(huge.usageMetadata!.candidatesTokenCount).toBe(countTokens('x'.repeat(40_000)));
  });

  it('streams a JSON array without alt=sse; countTokens; lists models; unknown methods are 404', async () => {
    const res = await geminiPost('/v1beta/models/gemini-2.5-flash:streamGenerateContent', userTurn('Hi'));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const arr = (await res.json()) as GeminiReply[];
    expect(arr.map((e) => e.candidates![0]!.content.parts[0]!.text).join('')).toBe(DEFAULT_REPLY);
    const count = (await (await geminiPost('/v1beta/models/gemini-2.5-flash:countTokens', userTurn('Hi there'))).json()) as { totalTokens: number };
    expect(count.totalTokens).toBe(countTokens('Hi there') + 3);
    const list = (await (await fetch(fake.url + '/v1beta/models', { headers: { 'x-goog-api-key': 'k' } })).json()) as { models: { name: string }[] };
    expect(list.models.map((m) => m.name)).toContain('models/gemini-2.5-flash');
    const missing = await geminiPost('/v1beta/models/gemini-2.5-flash:embedText', userTurn('x'));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as GeminiErr).error.status).toBe('NOT_FOUND');
    const notJson = await generate('gemini-2.5-flash', '{nope');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as GeminiErr).error.message).toMatch(/^Invalid JSON payload received/);
  });
});

describe('fake upstream: CLI', () => {
  it('prints its url, serves, and exits on SIGTERM', async () => {
    const cli = fileURLToPath(new URL('../support/fake-upstream-cli.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', cli, '--port', '0', '--chunk-delay', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const line = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: child.stdout! });
      rl.once('line', resolve);
      child.once('exit', () => reject(new Error('cli exited early')));
    });
    const { url } = JSON.parse(line) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // control plane: queue a fault from outside the process
    await fetch(url + '/__fake/queue', { method: 'POST', body: JSON.stringify({ type: 'status', status: 503 }) });
    const client = new OpenAI({ baseURL: url + '/v1', apiKey: 'x', maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'm', messages: user('x') })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    const r = await client.chat.completions.create({ model: 'm', messages: user('x') });
    expect(r.choices[0]!.message.content).toBe(DEFAULT_REPLY);
    const recs = (await (await fetch(url + '/__fake/requests')).json()) as unknown[];
    expect(recs).toHaveLength(2);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('fileTask mode (npm run compat)', () => {
  let task: FakeUpstream;
  beforeAll(async () => {
    task = await startFakeUpstream({ fileTask: true });
  });
  afterAll(async () => {
    await task.close();
  });
  const prompt = 'Create the file /tmp/w/hello.txt containing hello';
  const schema = { type: 'object', properties: {} };

  it('asks for the file-creating call of the tools it sees, on every protocol; after the result, a text', async () => {
    const claude = new Anthropic({ baseURL: task.url, apiKey: 'x', maxRetries: 0 });
    const reply = await claude.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: ['Bash', 'Write', 'Read'].map((name) => ({ name, input_schema: schema as Anthropic.Tool.InputSchema })),
      messages: [{ role: 'user', content: prompt }],
    });
    expect(reply.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'Write', input: { file_path: '/tmp/w/hello.txt', content: 'hello' } })]);

    const gpt = new OpenAI({ baseURL: task.url + '/v1', apiKey: 'x', maxRetries: 0 });
    const stream = await gpt.chat.completions.create({
      model: 'gpt-4o-mini',
      stream: true,
      tools: [{ type: 'function', function: { name: 'shell', parameters: schema } }],
      messages: [{ role: 'user', content: prompt }],
    });
    let args = '';
    for await (const c of stream) args += c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    expect(JSON.parse(args)).toEqual({ command: ['bash', '-lc', "printf '%s' 'hello' > '/tmp/w/hello.txt'"] });

    const gemini = (await (
      await fetch(task.url + '/v1beta/models/gemini-2.5-flash:generateContent', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'x' },
        body: JSON.stringify({
          contents: [{ role: 'user', parts: [{ text: prompt }] }],
          tools: [{ functionDeclarations: [{ name: 'read_file' }, { name: 'write_file' }] }],
        }),
      })
    ).json()) as { candidates: { content: { parts: { functionCall?: unknown }[] } }[] };
    expect(gemini.candidates[0]!.content.parts[0]!.functionCall).toEqual({ name: 'write_file', args: { file_path: '/tmp/w/hello.txt', content: 'hello' } });

    const done = await claude.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: [{ name: 'Write', input_schema: schema as Anthropic.Tool.InputSchema }],
      messages: [
        { role: 'user', content: prompt },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'File created' }] },
      ],
    });
    expect(done.content).toEqual([{ type: 'text', text: 'The tool said: File created' }]);
  });

  it('a request without a file task gets the text reply, tools or not', async () => {
    const claude = new Anthropic({ baseURL: task.url, apiKey: 'x', maxRetries: 0 });
    const reply = await claude.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: [{ name: 'Write', input_schema: schema as Anthropic.Tool.InputSchema }],
      messages: [{ role: 'user', content: 'What is up?' }],
    });
    expect(reply.content).toEqual([{ type: 'text', text: DEFAULT_REPLY }]);
  });
});

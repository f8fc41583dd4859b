// OpenAI chat client -> Anthropic Messages upstream: request mapping, whole replies and streams
// from recorded Anthropic bodies (tests/fixtures/anthropic), the exact client-side output.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '@/lib/errors';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { openaiToAnthropic, JSON_OBJECT_INSTRUCTION, jsonSchemaInstruction } from '@/lib/gateway/translate/openai-anthropic';
import type { CallInfo, Settlement } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { chunkOf, clientReq, refusalOf, sdkAnswering } from '../support/openai-client-harness';
import { fixtureText, parseDataStream, sseEvents } from '../support/sse-fixture';
import { describeOpenAiChatRobustness } from '../support/translator-robustness';

const model = modelInfo({ name: 'claude-sonnet-4-5', ownedBy: 'anthropic', protocol: 'anthropic', maxOutputTokens: 64000 });
const call = (over: Partial<CallInfo> = {}): CallInfo => ({ model, stream: false, requestId: 'req_7f3a', created: 1764120000, ...over });

/** The upstream body the translator builds for `json`. */
function upstream(json: Record<string, unknown>, over: Partial<CallInfo> = {}): Record<string, unknown> {
  const built = openaiToAnthropic.request(clientReq({ model: 'claude-sonnet-4-5', ...json }), call(over));
  return JSON.parse(String(built.body)) as Record<string, unknown>;
}

const refusal = (json: Record<string, unknown>): GatewayError => refusalOf(() => upstream(json));

const hi = [{ role: 'user', content: 'Hi' }];

const settled = (usage: Partial<Settlement['usage']> = {}): Settlement => ({
  usage: { promptTokens: 21, completionTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, ...usage },
  costUsd: '0.000243',
  costCny: '0.00174960',
  channel: 'anthropic-main',
  latencyMs: 812,
});

/** Runs a recorded stream through a fresh translator; returns the client's bytes (end() included) and the translator. */
function runStream(fixture: string, clientJson: Record<string, unknown> = { messages: hi, stream: true }, s = settled()) {
  const st = openaiToAnthropic.stream(call({ stream: true }), clientReq(clientJson));
  let out = '';
  for (const ev of sseEvents(fixtureText(fixture))) out += st.push(ev);
  const beforeEnd = out;
  out += st.end(s);
  return { st, out, beforeEnd };
}

const chunkBase = { id: 'chatcmpl-req_7f3a', object: 'chat.completion.chunk', created: 1764120000, model: 'claude-sonnet-4-5' };
const chunk = chunkOf(chunkBase);

describe('OpenAI chat -> Anthropic: request', () => {
  it('moves system and developer messages to the top-level system prompt, keeps turns in order, defaults max_tokens and sets anthropic-version', () => {
    const built = openaiToAnthropic.request(
      clientReq({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
        ],
      }),
      call(),
    );
    expect(built.headers).toEqual({ 'anthropic-version': '2023-06-01' });
    expect(JSON.parse(String(built.body))).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64000,
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
        { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
      ],
    });
  });

  it('asks for a stream when the client streams; the gateway-only service options never go upstream', () => {
    const body = upstream({ messages: hi, stream: true, stream_options: { include_usage: true }, service: { task: 'code' } }, { stream: true });
    expect(body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 64000, messages: hi, stream: true });
  });

  it('takes max_completion_tokens over max_tokens, and caps both at the model maximum', () => {
    expect(upstream({ messages: hi, max_tokens: 100, max_completion_tokens: 300 }).max_tokens).toBe(300);
    expect(upstream({ messages: hi, max_tokens: 100 }).max_tokens).toBe(100);
    expect(upstream({ messages: hi, max_tokens: 1_000_000 }).max_tokens).toBe(64000);
  });

  it('maps stop to stop_sequences, clamps temperature to 1 and maps user to metadata.user_id', () => {
    expect(upstream({ messages: hi, stop: 'END', temperature: 1.5, user: 'user-42' })).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64000,
      messages: hi,
      stop_sequences: ['END'],
      temperature: 1,
      metadata: { user_id: 'user-42' },
    });
    expect(upstream({ messages: hi, stop: ['\n\n', 'Observation:'], temperature: 0.2 })).toMatchObject({
      stop_sequences: ['\n\n', 'Observation:'],
      temperature: 0.2,
    });
  });

  it('sends top_p only when no temperature is set (recent Claude models refuse both together)', () => {
    const both = upstream({ messages: hi, temperature: 0.7, top_p: 0.9 });
    expect(both.temperature).toBe(0.7);
    expect(both.top_p).toBeUndefined();
    expect(upstream({ messages: hi, top_p: 0.9 })).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 64000, messages: hi, top_p: 0.9 });
  });

  it('keeps cache_control of system and user content parts (prompt caching from an OpenAI client)', () => {
    const body = upstream({
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Long manual...', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Be brief.' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Contract text...', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'Long manual...', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Be brief.' },
    ]);
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Contract text...', cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'text', text: 'Summarise.' },
        ],
      },
    ]);
  });

  it('sends a conversation of system messages only as the user turn', () => {
    expect(upstream({ messages: [{ role: 'system', content: 'Write a haiku about rain.' }] })).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64000,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Write a haiku about rain.' }] }],
    });
  });

  it('drops fields that do not change the reply (seed, store, metadata, service_tier, penalties, prompt_cache_key)', () => {
    const body = upstream({
      messages: hi,
      seed: 7,
      store: true,
      metadata: { k: 'v' },
      service_tier: 'auto',
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logit_bias: { '50256': -100 },
      prompt_cache_key: 'x',
      n: 1,
      logprobs: false,
    });
    expect(body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 64000, messages: hi });
  });

  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather',
      parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    },
  };
  const clock = { type: 'function', function: { name: 'now' } };
  const anthropicTools = [
    {
      name: 'get_weather',
      description: 'Current weather',
      input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    },
    { name: 'now', input_schema: { type: 'object', properties: {} } },
  ];

  it('maps function tools to input_schema tools and every tool_choice form', () => {
    const tools = [weather, clock];
    expect(upstream({ messages: hi, tools })).toMatchObject({ tools: anthropicTools });
    expect(upstream({ messages: hi, tools }).tool_choice).toBeUndefined();
    expect(upstream({ messages: hi, tools, tool_choice: 'auto' }).tool_choice).toEqual({ type: 'auto' });
    expect(upstream({ messages: hi, tools, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(upstream({ messages: hi, tools, tool_choice: 'required' }).tool_choice).toEqual({ type: 'any' });
    expect(upstream({ messages: hi, tools, tool_choice: { type: 'function', function: { name: 'now' } } }).tool_choice).toEqual({ type: 'tool', name: 'now' });
    expect(upstream({ messages: hi, tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(upstream({ messages: hi, tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(upstream({ messages: hi, tools, tool_choice: 'none', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    // tool_choice without tools means nothing upstream.
    expect(upstream({ messages: hi, tool_choice: 'none' })).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 64000, messages: hi });
  });

  it('turns assistant tool_calls into tool_use blocks and consecutive tool messages into one user turn of tool_result blocks', () => {
    const body = upstream({
      messages: [
        { role: 'user', content: 'Weather in SF and NYC?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco"}' } },
            { id: 'toolu_02', type: 'function', function: { name: 'get_weather', arguments: '{"location":"New York"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01', content: '18°C, fog' },
        { role: 'tool', tool_call_id: 'toolu_02', content: [{ type: 'text', text: '24°C, sun' }] },
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [weather],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in SF and NYC?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'San Francisco' } },
          { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { location: 'New York' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01', content: '18°C, fog' },
          { type: 'tool_result', tool_use_id: 'toolu_02', content: '24°C, sun' },
        ],
      },
      { role: 'user', content: 'And tomorrow?' },
    ]);
  });

  it('refuses tool-call arguments that are not a JSON object with a 400 naming the field', () => {
    const err = refusal({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] },
      ],
    });
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('sends data-URL images as base64 sources, http URLs as url sources and PDFs as documents', () => {
    const body = upstream({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } },
        ],
      },
    ]);
  });

  it('asks for JSON through a system instruction (json_object) including the schema (json_schema)', () => {
    expect(upstream({ messages: [{ role: 'system', content: 'Be brief.' }, ...hi], response_format: { type: 'json_object' } }).system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: JSON_OBJECT_INSTRUCTION },
    ]);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(upstream({ messages: hi, response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } }).system).toEqual([
      { type: 'text', text: jsonSchemaInstruction(schema) },
    ]);
    expect(upstream({ messages: hi, response_format: { type: 'text' } }).system).toBeUndefined();
  });

  it('maps reasoning_effort to a thinking budget below max_tokens and leaves the sampling knobs out', () => {
    expect(upstream({ messages: hi, reasoning_effort: 'low', temperature: 0.3, top_p: 0.5 })).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64000,
      messages: hi,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(upstream({ messages: hi, reasoning_effort: 'medium' }).thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(upstream({ messages: hi, reasoning_effort: 'high' }).thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(upstream({ messages: hi, reasoning_effort: 'high', max_completion_tokens: 5000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 4999 });
    // Below Anthropic's minimum budget, no thinking (and the temperature stays).
    expect(upstream({ messages: hi, reasoning_effort: 'high', max_tokens: 1000, temperature: 0.3 })).toMatchObject({ max_tokens: 1000, temperature: 0.3 });
    expect(upstream({ messages: hi, reasoning_effort: 'high', max_tokens: 1000 }).thinking).toBeUndefined();
    expect(upstream({ messages: hi, reasoning_effort: 'minimal' }).thinking).toBeUndefined();
  });

  it('leaves thinking off with a forced tool and mid tool loop (Anthropic wants signed thinking back there)', () => {
    const tools = [weather];
    expect(upstream({ messages: hi, tools, tool_choice: 'required', reasoning_effort: 'high' }).thinking).toBeUndefined();
    const loop = [
      ...hi,
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'sunny' },
    ];
    expect(upstream({ messages: loop, tools, reasoning_effort: 'high' }).thinking).toBeUndefined();
    expect(
      upstream({ messages: [...loop, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'Thanks' }], tools, reasoning_effort: 'high' })
        .thinking,
    ).toEqual({ type: 'enabled', budget_tokens: 16384 });
  });

  it.each([
    [{ n: 2 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 3 }, 'top_logprobs'],
    [{ modalities: ['text', 'audio'] }, 'modalities'],
    [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
    [{ functions: [{ name: 'f' }] }, 'functions'],
    [{ web_search_options: {} }, 'web_search_options'],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] }, 'messages[0].content[0]'],
    [{ tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type'],
    [{ reasoning_effort: 'extreme' }, 'reasoning_effort'],
  ])('refuses %j with a 400 naming %s and the model', (extra, param) => {
    const err = refusal({ messages: hi, ...extra });
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_request');
    expect(err.param).toBe(param);
    if (param !== 'reasoning_effort') expect(err.message).toContain('claude-sonnet-4-5');
  });

  it('refuses images given as neither a base64 data URL nor an http(s) URL', () => {
    const err = refusal({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] });
    expect(err.param).toBe('messages[0].content[0].image_url.url');
  });
});

describe('OpenAI chat -> Anthropic: whole replies', () => {
  it('renders two tool_use blocks as tool_calls with JSON arguments and finish_reason tool_calls', async () => {
    const reply = openaiToAnthropic.response(fixtureText('anthropic/tools.json'), call());
    const body = JSON.parse(reply.render(settled({ promptTokens: 412, completionTokens: 118 }))) as Record<string, any>;
    expect(body.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: "I'll check the weather in both cities.",
          refusal: null,
          tool_calls: [
            {
              id: 'toolu_01A09q90qw90lq917835lq9',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
            },
            {
              id: 'toolu_01B18r81rx81mr826724mr8',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"New York, NY","unit":"celsius"}' },
            },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(body.usage).toMatchObject({ prompt_tokens: 412, completion_tokens: 118, total_tokens: 530 });
    expect(reply.completion).toBe(
      `I'll check the weather in both cities.{"location":"San Francisco, CA","unit":"celsius"}{"location":"New York, NY","unit":"celsius"}`,
    );
    // The official SDK reads it as a completion with two tool calls.
    const sdk = sdkAnswering(reply.render(settled()), 'application/json');
    const completion = await sdk.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0].message.tool_calls?.map((t) => (t.type === 'function' ? t.function.name : ''))).toEqual(['get_weather', 'get_weather']);
  });

  it('returns thinking as reasoning_content, the signed block as thinking_blocks, and reports reasoning tokens from the settlement', () => {
    const reply = openaiToAnthropic.response(fixtureText('anthropic/thinking.json'), call());
    expect(reply.completion).toBe('The user asks for 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.27 × 453 = 12,231.');
    const body = JSON.parse(reply.render(settled({ promptTokens: 46, completionTokens: 91, reasoningTokens: 60 }))) as Record<string, any>;
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: '27 × 453 = 12,231.',
      refusal: null,
      reasoning_content: 'The user asks for 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.',
      thinking_blocks: [
        {
          type: 'thinking',
          thinking: 'The user asks for 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.',
          signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1ZqqCWmZlrtxqCVGcF6pCZjMOgYVCKSvVUXoVYrwIZRjGYPVh8UmN5uWfcVJTe0IjyA',
        },
      ],
    });
    expect(body.usage.completion_tokens_details).toEqual({ reasoning_tokens: 60 });
  });

  it('reports cache reads and writes apart for billing and inside prompt_tokens for the client; max_tokens -> length', () => {
    const reply = openaiToAnthropic.response(fixtureText('anthropic/cache.json'), call());
    expect(reply.usage).toEqual({
      promptTokens: 14,
      completionTokens: 16,
      cacheReadTokens: 1872,
      cacheWriteTokens: 248,
      reasoningTokens: 0,
      completionFinal: true,
    });
    const body = JSON.parse(reply.render(settled({ promptTokens: 14, completionTokens: 16, cacheReadTokens: 1872, cacheWriteTokens: 248 }))) as Record<
      string,
      any
    >;
    expect(body.usage).toEqual({
      prompt_tokens: 2134,
      completion_tokens: 16,
      total_tokens: 2150,
      prompt_tokens_details: { cached_tokens: 1872 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(body.choices[0].finish_reason).toBe('length');
  });

  it('maps refusal to content_filter and a tool_use stop without tool calls to stop', () => {
    const base = JSON.parse(fixtureText('anthropic/text.json')) as Record<string, unknown>;
    const finish = (stop_reason: string) =>
      (JSON.parse(openaiToAnthropic.response(JSON.stringify({ ...base, stop_reason }), call()).render(settled())) as Record<string, any>).choices[0]
        .finish_reason;
    expect(finish('refusal')).toBe('content_filter');
    expect(finish('tool_use')).toBe('stop');
    expect(finish('stop_sequence')).toBe('stop');
    expect(finish('model_context_window_exceeded')).toBe('length');
  });

  it('a reply without usage reports none (the pipeline estimates); garbage is a protocol failure', () => {
    const base = JSON.parse(fixtureText('anthropic/text.json')) as Record<string, unknown>;
    expect(openaiToAnthropic.response(JSON.stringify({ ...base, usage: undefined }), call()).usage).toBeNull();
    expect(() => openaiToAnthropic.response('<html>502</html>', call())).toThrow(UpstreamFailure);
    expect(() => openaiToAnthropic.response('{"id":"msg_1"}', call())).toThrow(expect.objectContaining({ kind: 'protocol' }));
  });
});

describe('OpenAI chat -> Anthropic: streams', () => {
  it('numbers two parallel tool calls 0 and 1 (not by Anthropic block index) and relays argument fragments', async () => {
    const { st, out } = runStream(
      'anthropic/tools.sse',
      { messages: hi, stream: true, stream_options: { include_usage: true } },
      settled({ promptTokens: 412, completionTokens: 118 }),
    );
    expect(st.finished).toBe(true);
    const { chunks } = parseDataStream(out);
    expect(chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: "I'll check the weather" }),
      chunk({ content: ' in both cities.' }),
      chunk({ tool_calls: [{ index: 0, id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location": "San Fra' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'ncisco, CA", "unit": ' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"celsius"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'toolu_01B18r81rx81mr826724mr8', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"location": "New Y' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: 'ork, NY", "unit": "celsius"}' } }] }),
      chunk({}, 'tool_calls'),
      {
        ...chunkBase,
        choices: [],
        usage: {
          prompt_tokens: 412,
          completion_tokens: 118,
          total_tokens: 530,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0 },
          cost_usd: 0.000243,
          cost_cny: 0.0017496,
        },
      },
    ]);
    expect(out).toContain('"cost_usd":0.000243,"cost_cny":0.00174960}');
    const sdk = sdkAnswering(out, 'text/event-stream');
    const final = await sdk.chat.completions
      .stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }], stream: true })
      .finalChatCompletion();
    const calls = final.choices[0].message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === 'function' ? [c.id, JSON.parse(c.function.arguments)] : null))).toEqual([
      ['toolu_01A09q90qw90lq917835lq9', { location: 'San Francisco, CA', unit: 'celsius' }],
      ['toolu_01B18r81rx81mr826724mr8', { location: 'New York, NY', unit: 'celsius' }],
    ]);
    expect(final.choices[0].finish_reason).toBe('tool_calls');
  });

  it('streams thinking as reasoning_content deltas, then the signed block whole as thinking_blocks', () => {
    const { st, out } = runStream('anthropic/thinking.sse');
    expect(parseDataStream(out).chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: '27 * 453 = 27 * 400 + 27 * 53' }),
      chunk({ reasoning_content: ' = 10800 + 1431 = 12231.' }),
      chunk({
        thinking_blocks: [
          {
            type: 'thinking',
            thinking: '27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.',
            signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1ZqqCWmZlrtxqCVGcF6pCZjMOgYVCKSvVUXoVYrwIZRjGYPVh8UmN5uWfcVJTe0IjyA',
          },
        ],
      }),
      chunk({ content: '27 × 453 = 12,231.' }),
      chunk({}, 'stop'),
    ]);
    expect(st.completion).toBe('27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.27 × 453 = 12,231.');
    expect(st.usage).toMatchObject({ promptTokens: 46, completionTokens: 91 });
  });

  it('keeps cache counts from message_start through message_delta (CRLF-framed stream) and puts them in the usage chunk', () => {
    const st = openaiToAnthropic.stream(call({ stream: true }), clientReq({ messages: hi, stream: true, stream_options: { include_usage: true } }));
    const events = sseEvents(fixtureText('anthropic/cache.sse'));
    let out = st.push(events[0]);
    expect(st.usage).toEqual({
      promptTokens: 14,
      completionTokens: 1,
      cacheReadTokens: 1872,
      cacheWriteTokens: 248,
      reasoningTokens: 0,
      completionFinal: false,
    });
    for (const ev of events.slice(1)) out += st.push(ev);
    expect(st.usage).toEqual({
      promptTokens: 14,
      completionTokens: 16,
      cacheReadTokens: 1872,
      cacheWriteTokens: 248,
      reasoningTokens: 0,
      completionFinal: true,
    });
    out += st.end(settled({ promptTokens: 14, completionTokens: 16, cacheReadTokens: 1872, cacheWriteTokens: 248 }));
    const { chunks } = parseDataStream(out);
    expect(chunks.at(-2)).toEqual(chunk({}, 'stop'));
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 2134, completion_tokens: 16, total_tokens: 2150, prompt_tokens_details: { cached_tokens: 1872 } },
    });
  });

  it('sends "{}" for a streamed tool call without arguments (clients parse it)', () => {
    const st = openaiToAnthropic.stream(call({ stream: true }), clientReq({ messages: hi, stream: true }));
    const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data: JSON.stringify(data), raw: '' });
    let out = st.push(
      ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 30, output_tokens: 1 } } }),
    );
    out += st.push(ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_9', name: 'now', input: {} } }));
    out += st.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }));
    out += st.push(ev({ type: 'content_block_stop', index: 0 }));
    out += st.push(ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }));
    out += st.push(ev({ type: 'message_stop' }));
    expect(parseDataStream(out).chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ tool_calls: [{ index: 0, id: 'toolu_9', type: 'function', function: { name: 'now', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(st.finished).toBe(true);
    expect(st.usage).toMatchObject({ promptTokens: 30, completionTokens: 9, completionFinal: true });
  });

  it('sends nothing for message_start, so an error right after it leaves the client untouched (another channel can answer)', () => {
    const st = openaiToAnthropic.stream(call({ stream: true }), clientReq({ messages: hi, stream: true }));
    const events = sseEvents(fixtureText('anthropic/error.sse'));
    expect(st.push(events[0])).toBe('');
    expect(st.usage).toMatchObject({ promptTokens: 21, completionFinal: false });
    expect(() => st.push(events.at(-1)!)).toThrow(UpstreamFailure);
  });

  it('throws a protocol failure on malformed JSON, and a cut stream is not finished', () => {
    const st = openaiToAnthropic.stream(call({ stream: true }), clientReq({ messages: hi, stream: true }));
    const events = sseEvents(fixtureText('anthropic/text.sse'));
    for (const ev of events.slice(0, 5)) st.push(ev);
    expect(st.finished).toBe(false);
    expect(() => st.push({ event: 'content_block_delta', data: '{"type":"content_block_delta",', raw: '' })).toThrow(
      expect.objectContaining({ kind: 'protocol' }),
    );
  });
});

describe('OpenAI chat -> Anthropic: errors', () => {
  it('puts an Anthropic error in the OpenAI envelope, keeping the status', () => {
    const e = openaiToAnthropic.error(400, fixtureText('anthropic/error.json'));
    expect(e.status).toBe(400);
    expect(JSON.parse(e.body)).toEqual({
      error: {
        message: "messages.1.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    });
    const notFound = openaiToAnthropic.error(404, '{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}');
    expect(notFound.status).toBe(404);
    expect(JSON.parse(notFound.body).error).toEqual({ message: 'model: claude-x', type: 'invalid_request_error', param: null, code: 'not_found_error' });
    const tooLarge = openaiToAnthropic.error(413, 'request entity too large');
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body).error.message).toBe('The upstream answered 413: request entity too large');
  });
});

describeOpenAiChatRobustness('OpenAI chat -> Anthropic: robustness', { translator: openaiToAnthropic, call, clientReq, refusal, settled });

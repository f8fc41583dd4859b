import { describe, expect, it } from 'vitest';
import { anthropicToOpenai as t } from '@/lib/gateway/translate/anthropic-openai';
import type { CallInfo } from '@/lib/gateway/translate/types';
import type { JsonObject } from '@/lib/gateway/body';
import { anthropicClientHarness, anthropicEvents, clientReq, sdkFinalMessage as sdkFinalMessageOf, testModel } from '../support/anthropic-client-harness';
import { fixture, parseClientSse, sseEvents } from '../support/sse-fixtures';

const model = testModel;
const gpt = model({ name: 'gpt-4o', ownedBy: 'openai' });
const deepseek = model({ name: 'deepseek-reasoner', ownedBy: 'deepseek' });

function callOf(stream = false, model = gpt): CallInfo {
  return { model, stream, requestId: 'req_01abc', created: 1764120000 };
}

const base = { model: 'gpt-4o', max_tokens: 1024 };

const { upstream, refusal, settle, reply, stream } = anthropicClientHarness(t, { callOf, base, fixtureDir: 'openai', channel: 'openai-main' });
const { messageStart, ev, textDelta, jsonDelta, usage } = anthropicEvents('req_01abc', 'gpt-4o');
const sdkFinalMessage = (bytes: string) => sdkFinalMessageOf(bytes, 'gpt-4o');

describe('anthropic -> openai: requests', () => {
  it('puts the system prompt first, keeps turns in order, maps sampling and stop parameters', () => {
    const body = upstream({
      system: [
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Answer in English.' },
      ],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Part one.' },
            { type: 'text', text: 'Part two.', cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['\n\nHuman:', 'END'],
      metadata: { user_id: 'user-7' },
      service_tier: 'auto',
    });
    expect(body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.\n\nAnswer in English.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Part one.' },
            { type: 'text', text: 'Part two.' },
          ],
        },
      ],
      max_completion_tokens: 1024,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['\n\nHuman:', 'END'],
      user: 'user-7',
    });
  });

  it("sends max_tokens to other vendors' OpenAI-compatible servers, and asks a stream for its usage", () => {
    const body = upstream({ max_tokens: 2048, messages: [{ role: 'user', content: 'Hi' }] }, callOf(true, deepseek));
    expect(body).toEqual({
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 2048,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("lowers max_tokens to the model's max_output_tokens and shortens a user id longer than OpenAI's 64 characters", () => {
    const claudeCodeUser = 'user_2f9c1e0b7a4d8e6f5c3b1a0987654321fedcba9876543210abcdef0123456789_account__session_5b3f8e2a-1c4d-4e6f-9a7b-0c1d2e3f4a5b';
    const body = upstream({ max_tokens: 32000, metadata: { user_id: claudeCodeUser }, messages: [{ role: 'user', content: 'Hi' }] });
    expect(body.max_completion_tokens).toBe(16384);
    expect(body.user).toMatch(/^[0-9a-f]{64}$/);
    expect(upstream({ metadata: { user_id: claudeCodeUser }, messages: [{ role: 'user', content: 'Hi' }] }).user).toBe(body.user);
    expect(refusal({ max_tokens: 0, messages: [{ role: 'user', content: 'Hi' }] }).param).toBe('max_tokens');
  });

  it('maps tools, input_schema and every tool_choice', () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' }, type: 'custom' },
    ];
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const mapped = [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather for a city', parameters: tools[0].input_schema },
      },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
    expect(upstream({ messages, tools }).tools).toEqual(mapped);
    expect(upstream({ messages, tools }).tool_choice).toBeUndefined();
    expect(upstream({ messages, tools, tool_choice: { type: 'auto' } }).tool_choice).toBe('auto');
    expect(upstream({ messages, tools, tool_choice: { type: 'any' } }).tool_choice).toBe('required');
    expect(upstream({ messages, tools, tool_choice: { type: 'none' } }).tool_choice).toBe('none');
    expect(upstream({ messages, tools, tool_choice: { type: 'tool', name: 'get_time' } }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_time' },
    });
    const serial = upstream({ messages, tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    expect(serial.tool_choice).toBe('auto');
    expect(serial.parallel_tool_calls).toBe(false);
    // OpenAI refuses tool_choice without tools: dropped with them.
    const none = upstream({ messages, tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(none).not.toHaveProperty('tool_choice');
    expect(none).not.toHaveProperty('parallel_tool_calls');
  });

  it('turns tool_use into tool_calls and tool_result blocks into tool messages before the rest of the turn', () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const body = upstream({
      messages: [
        { role: 'user', content: 'Weather in Paris and Tokyo, and a chart?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Two cities.', signature: 'EqQBCkgIARABGAIiQL' },
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Tokyo' } },
            { type: 'tool_use', id: 'toolu_01C', name: 'chart', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18°C, cloudy' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01B',
              content: [
                { type: 'text', text: '24°C' },
                { type: 'text', text: 'sunny' },
              ],
            },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01C',
              content: [
                { type: 'text', text: 'chart attached' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
              ],
            },
            { type: 'text', text: 'Summarise please.' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01D', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01D', content: 'city not found', is_error: true }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Tokyo, and a chart?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          { id: 'toolu_01C', type: 'function', function: { name: 'chart', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01A', content: '18°C, cloudy' },
      { role: 'tool', tool_call_id: 'toolu_01B', content: '24°C\nsunny' },
      { role: 'tool', tool_call_id: 'toolu_01C', content: 'chart attached' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'text', text: 'Summarise please.' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_01D', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_01D', content: 'Error: city not found' },
    ]);
  });

  it('maps images (base64 and URL) and documents (PDF as a file part, text as text)', () => {
    const body = upstream({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'terms.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain notes.' } },
            { type: 'text', text: 'Describe these.' },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'file', file: { filename: 'terms.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' } },
          { type: 'text', text: 'Plain notes.' },
          { type: 'text', text: 'Describe these.' },
        ],
      },
    ]);
  });

  it('maps thinking budgets and effort onto reasoning_effort for a model tagged reasoning', () => {
    const messages = [{ role: 'user', content: 'Think.' }];
    const o3 = model({ name: 'o3-mini', ownedBy: 'openai', tags: ['chat', 'reasoning'] });
    const effort = (json: JsonObject) => upstream({ messages, ...json }, callOf(false, o3)).reasoning_effort;
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 1024 } })).toBe('low');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 4000 } })).toBe('low');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 10000 } })).toBe('medium');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 31999 } })).toBe('high');
    expect(effort({ thinking: { type: 'adaptive' } })).toBeUndefined();
    expect(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })).toBe('medium');
    expect(effort({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })).toBe('high');
    expect(effort({ thinking: { type: 'disabled' } })).toBeUndefined();
  });

  it('sends no reasoning_effort to a model not tagged reasoning (OpenAI refuses it there): thinking and effort are dropped and recorded', () => {
    const json = { ...base, messages: [{ role: 'user', content: 'Think.' }], thinking: { type: 'adaptive' }, output_config: { effort: 'high' } };
    const out = t.request(clientReq(json), callOf());
    expect(JSON.parse(String(out.body))).not.toHaveProperty('reasoning_effort');
    expect(out.dropped).toEqual(['thinking', 'output_config.effort']);
    expect(t.request(clientReq({ ...json, thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: undefined }), callOf()).dropped).toEqual([
      'thinking',
    ]);
  });

  it('maps structured output (output_config.format and the beta output_format) to a strict json_schema', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const want = { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };
    const messages = [{ role: 'user', content: 'JSON please' }];
    expect(upstream({ messages, output_config: { format: { type: 'json_schema', schema } } }).response_format).toEqual(want);
    expect(upstream({ messages, output_format: { type: 'json_schema', schema } }).response_format).toEqual(want);
  });

  it('refuses what an OpenAI upstream cannot carry with a 400 naming the parameter and the model', () => {
    const messages = [{ role: 'user', content: 'Hi' }];
    const cases: [JsonObject, string][] = [
      [{ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] }, 'tools.0.type'],
      [
        {
          tools: [
            { name: 'ok', input_schema: { type: 'object' } },
            { type: 'bash_20250124', name: 'bash' },
          ],
        },
        'tools.1.type',
      ],
      [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }, 'mcp_servers'],
      [{ container: 'container_011' }, 'container'],
      [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_011' } }] }] }, 'messages.0.content.0.source.type'],
      [
        { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }] },
        'messages.0.content.0.source.type',
      ],
      [
        {
          messages: [
            { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' }, citations: { enabled: true } }] },
          ],
        },
        'messages.0.content.0.citations',
      ],
      [
        {
          messages: [
            { role: 'user', content: 'Search' },
            { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'x' } }] },
          ],
        },
        'messages.1.content.0.type',
      ],
    ];
    for (const [json, param] of cases) {
      const err = refusal({ messages, ...json });
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_request');
      expect(err.param).toBe(param);
      expect(err.message).toContain(param);
      expect(err.message).toContain('gpt-4o');
    }
    expect(refusal({ messages: [{ role: 'tool', content: 'x' }] }).param).toBe('messages.0.role');
  });
});

describe('anthropic -> openai: what Claude Code sends', () => {
  const schema = { type: 'object', properties: {} };
  const callAndResult = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'Write', input: {} }] },
    { role: 'system', content: 'Mind the environment.' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'done' }] },
  ];

  it('a system message inside messages stays where it stood; one between tool calls and their results follows the results', () => {
    const body = upstream({
      system: 'Top.',
      messages: [{ role: 'user', content: 'Hi' }, { role: 'system', content: [{ type: 'text', text: 'Env.' }] }, ...callAndResult],
    });
    expect((body.messages as JsonObject[]).map((m) => [m.role, m.content])).toEqual([
      ['system', 'Top.'],
      ['user', 'Hi'],
      ['system', 'Env.'],
      ['assistant', null],
      ['tool', 'done'],
      ['system', 'Mind the environment.'],
    ]);
  });

  it('deferred tools go as ordinary tools; a tool-search server tool is dropped and recorded; forcing it is a 400', () => {
    const json = {
      ...base,
      messages: [{ role: 'user', content: 'Hi' }],
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      tools: [
        { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
        { name: 'Write', input_schema: schema, defer_loading: true },
      ],
    };
    const out = t.request(clientReq(json), callOf());
    expect(out.dropped).toEqual(['context_management', 'tool_search_tool_regex']);
    expect((JSON.parse(String(out.body)) as JsonObject).tools).toEqual([{ type: 'function', function: { name: 'Write', parameters: schema } }]);
    expect(refusal({ ...json, tool_choice: { type: 'tool', name: 'tool_search_tool_regex' } }).param).toBe('tool_choice.name');
    expect(t.request(clientReq({ ...base, messages: [{ role: 'user', content: 'Hi' }] }), callOf()).dropped).toBeUndefined();
    expect(t.request(clientReq({ ...base, messages: [{ role: 'user', content: 'Hi' }], top_k: 5 }), callOf()).dropped).toEqual(['top_k']);
  });

  it("a tool_reference in a tool result (Claude Code's ToolSearch answer) becomes text", () => {
    const body = upstream({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'ToolSearch', input: { query: 'select:Write' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'tool_reference', tool_name: 'Write' }] }] },
      ],
    });
    expect((body.messages as JsonObject[]).at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'Tool available: Write' });
  });

  it('tool-search blocks in the history are dropped and recorded', () => {
    const out = t.request(
      clientReq({
        ...base,
        messages: [
          { role: 'user', content: 'Find a tool' },
          {
            role: 'assistant',
            content: [
              { type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_regex', input: { query: 'write' } },
              { type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'tool_search_tool_search_result', tool_references: [] } },
              { type: 'text', text: 'Found it.' },
            ],
          },
          { role: 'user', content: 'Go on' },
        ],
      }),
      callOf(),
    );
    expect(out.dropped).toEqual(['server_tool_use', 'tool_search_tool_result']);
    expect((JSON.parse(String(out.body)) as JsonObject).messages).toEqual([
      { role: 'user', content: 'Find a tool' },
      { role: 'assistant', content: 'Found it.' },
      { role: 'user', content: 'Go on' },
    ]);
  });
});

describe('anthropic -> openai: whole replies', () => {
  it('two parallel tool calls become tool_use blocks with parsed input and stop_reason tool_use', () => {
    const { r, body } = reply('reply-tools.json');
    expect(body.content).toEqual([
      { type: 'tool_use', id: 'call_Qe3Vw8nZ1pL0sKjT4rYbX2aF', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      { type: 'tool_use', id: 'call_M7cR2dH9kW5vN1qJ8tPzE6gU', name: 'get_weather', input: { city: 'Tokyo', unit: 'celsius' } },
    ]);
    expect(body.stop_reason).toBe('tool_use');
    expect(body.usage).toEqual(usage(82, 51));
    expect(r.completion).toBe('{"city":"Paris","unit":"celsius"}{"city":"Tokyo","unit":"celsius"}');
  });

  it("DeepSeek's reasoning_content becomes a thinking block (empty signature) before the text", () => {
    const { r, body } = reply('reply-reasoning.json', callOf(false, deepseek));
    expect(body.content).toEqual([
      { type: 'thinking', thinking: 'Compare 9.11 and 9.9: the tenths digit of 9.9 is 9, of 9.11 is 1, so 9.9 is larger.', signature: '' },
      { type: 'text', text: '9.11 is smaller than 9.9.' },
    ]);
    expect(body.model).toBe('deepseek-reasoner');
    expect(r.usage).toEqual({ promptTokens: 28, completionTokens: 144, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 131, completionFinal: true });
  });

  it('cached prompt tokens come back as cache_read_input_tokens, input_tokens the uncached rest', () => {
    const { r, body } = reply('reply-cache.json');
    expect(r.usage).toEqual({ promptTokens: 386, completionTokens: 8, cacheReadTokens: 1920, cacheWriteTokens: 0, reasoningTokens: 0, completionFinal: true });
    expect(body.usage).toEqual(usage(386, 8, 1920));
    // DeepSeek reports its cache hits in its own field.
    expect(reply('reply-deepseek-cache.json', callOf(false, deepseek)).r.usage).toMatchObject({ promptTokens: 220, cacheReadTokens: 1280 });
  });

  it('a refusal is text with stop_reason refusal; length is max_tokens; a matched stop string is stop_sequence', () => {
    const { body } = reply('reply-refusal.json');
    expect(body.content).toEqual([{ type: 'text', text: "I'm sorry, I can't help with that." }]);
    expect(body.stop_reason).toBe('refusal');
    const of = (choice: JsonObject) =>
      JSON.parse(
        t.response(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, ...choice }] }), callOf()).render(settle(null)),
      ) as JsonObject;
    expect(of({ finish_reason: 'length' }).stop_reason).toBe('max_tokens');
    expect(of({ finish_reason: 'content_filter' }).stop_reason).toBe('refusal');
    expect(of({ finish_reason: 'stop', stop_reason: 'END' })).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    // No usage reported: the pipeline estimates.
    expect(t.response(JSON.stringify({ choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] }), callOf()).usage).toBeNull();
  });
});

describe('anthropic -> openai: streams', () => {
  it('two parallel tool calls: one tool_use block each, contiguous indices, fragments kept in order', async () => {
    const { out, events } = stream('stream-tools.sse');
    const frags = ['{"ci', 'ty": "P', 'aris", ', '"unit": "c', 'elsius"}'];
    const frags2 = ['{"ci', 'ty": "T', 'okyo", ', '"unit": "c', 'elsius"}'];
    expect(events).toEqual([
      messageStart(),
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'call_Qe3Vw8nZ1pL0sKjT4rYbX2aF', name: 'get_weather', input: {} } }),
      ...frags.map((f) => jsonDelta(0, f)),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'call_M7cR2dH9kW5vN1qJ8tPzE6gU', name: 'get_weather', input: {} } }),
      ...frags2.map((f) => jsonDelta(1, f)),
      ev('content_block_stop', { index: 1 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: usage(82, 51) }),
      ev('message_stop', {}),
    ]);
    const msg = await sdkFinalMessage(out);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type))).toEqual([
      ['call_Qe3Vw8nZ1pL0sKjT4rYbX2aF', 'get_weather', { city: 'Paris', unit: 'celsius' }],
      ['call_M7cR2dH9kW5vN1qJ8tPzE6gU', 'get_weather', { city: 'Tokyo', unit: 'celsius' }],
    ]);
  });

  it('reasoning_content deltas: a thinking block first, then the text block', async () => {
    const { st, out, events } = stream('stream-reasoning.sse', callOf(true, deepseek));
    expect(events).toEqual([
      messageStart('deepseek-reasoner'),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ...['Compare', ' 9.11', ' and', ' 9.9', ':', ' 9.9', ' is', ' larger.'].map((p) =>
        ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: p } }),
      ),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      ...['9.11', ' is', ' smaller.'].map((p) => textDelta(1, p)),
      ev('content_block_stop', { index: 1 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: usage(28, 40) }),
      ev('message_stop', {}),
    ]);
    expect(st.usage).toMatchObject({ reasoningTokens: 33, completionTokens: 40 });
    const msg = await sdkFinalMessage(out);
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text']);
  });

  it('cache usage from the final usage chunk reaches message_delta', () => {
    const { st, events } = stream('stream-cache.sse');
    expect(st.usage).toEqual({ promptTokens: 386, completionTokens: 8, cacheReadTokens: 1920, cacheWriteTokens: 0, reasoningTokens: 0, completionFinal: true });
    expect(events.at(-2)).toEqual(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: usage(386, 8, 1920) }));
  });

  it('a stream cut before finish_reason is not finished; keep-alive comments and empty events write nothing', () => {
    const st = t.stream(callOf(true), clientReq(base));
    const evs = sseEvents(fixture('openai/stream-text.sse'));
    expect(st.push({ event: 'message', data: '', raw: ': keep-alive\n\n' })).toBe('');
    for (const e of evs.slice(0, 4)) st.push(e);
    expect(st.finished).toBe(false);
    expect(st.usage).toBeNull();
  });

  it('a tool call whose name arrives after its first fragment, and a stop sequence the server names', () => {
    const st = t.stream(callOf(true), clientReq({ ...base, stop_sequences: ['END'] }));
    const chunk = (choice: JsonObject) => ({ event: 'message', data: JSON.stringify({ choices: [{ index: 0, ...choice }] }), raw: '' });
    let out = st.push(chunk({ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '{"a"' } }] } }));
    out += st.push(chunk({ delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1}' } }] } }));
    out += st.push(chunk({ delta: {}, finish_reason: 'stop' }));
    out += st.end(settle(null));
    const events = parseClientSse(out);
    // The block starts once the name is known, with the fragments held so far.
    expect(events.slice(1, 4)).toEqual([
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {} } }),
      jsonDelta(0, '{"a":1}'),
      ev('content_block_stop', { index: 0 }),
    ]);
    // finish_reason "stop" with tool calls (some servers): still tool_use for the client's agent loop.
    expect((events[4].data as JsonObject).delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });

    const st2 = t.stream(callOf(true), clientReq({ ...base, stop_sequences: ['END'] }));
    st2.push(chunk({ delta: { content: 'a' } }));
    st2.push(chunk({ delta: {}, finish_reason: 'stop', stop_reason: 'END' }));
    expect((parseClientSse(st2.end(settle(null)))[0].data as JsonObject).delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
  });
});

describe('anthropic -> openai: errors', () => {
  it("puts the upstream's 4xx into Anthropic's envelope, the status kept", () => {
    const openaiErr = (message: string, type: string, code: string | null) => JSON.stringify({ error: { message, type, param: null, code } });
    expect(t.error(400, openaiErr("Invalid 'messages[1].content': string too long.", 'invalid_request_error', 'string_above_max_length'))).toEqual({
      status: 400,
      body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: "Invalid 'messages[1].content': string too long." } }),
    });
    const cases: [number, string][] = [
      [401, 'authentication_error'],
      [403, 'permission_error'],
      [404, 'not_found_error'],
      [413, 'request_too_large'],
      [422, 'invalid_request_error'],
      [429, 'rate_limit_error'],
    ];
    for (const [status, type] of cases) {
      const out = t.error(status, openaiErr('nope', 'x', null));
      expect(out.status).toBe(status);
      expect(JSON.parse(out.body)).toEqual({ type: 'error', error: { type, message: 'nope' } });
    }
    expect(JSON.parse(t.error(400, 'Bad Request').body)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'Bad Request' } });
    expect(JSON.parse(t.error(404, '').body).error.message).toBe('The upstream answered 404.');
  });
});

describe('anthropic -> openai: against the fake OpenAI upstream', () => {
  it('a tool round trip, streamed, with the usage the upstream reports', async () => {
    const { startFakeUpstream, TOOL_CALL_ARGUMENTS } = await import('../support/fake-upstream');
    const fake = await startFakeUpstream();
    try {
      const post = (body: string | Buffer) =>
        fetch(`${fake.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
          body: String(body),
        });
      const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
      const first = { ...base, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] };
      const r = t.response(await (await post(t.request(clientReq(first), callOf()).body)).text(), callOf());
      const msg = JSON.parse(r.render(settle(r.usage))) as { content: JsonObject[]; stop_reason: string };
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^call_/), name: 'get_weather', input: JSON.parse(TOOL_CALL_ARGUMENTS) }]);

      const second = {
        ...first,
        messages: [
          ...first.messages,
          { role: 'assistant', content: msg.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: msg.content[0].id, content: 'sunny' }] },
        ],
      };
      expect(fake.requests.at(-1)!.json).toMatchObject({ max_completion_tokens: 1024 });
      const st = t.stream(callOf(true), clientReq(second));
      let out = '';
      for (const e of sseEvents(await (await post(t.request(clientReq(second), callOf(true)).body)).text())) out += st.push(e);
      expect(st.finished).toBe(true);
      expect(st.usage).not.toBeNull();
      out += st.end(settle(st.usage));
      const final = await sdkFinalMessage(out);
      expect(final.content).toEqual([{ type: 'text', text: 'The tool said: sunny' }]);
      expect(final.usage.output_tokens).toBe(st.usage!.completionTokens);
    } finally {
      await fake.close();
    }
  });
});

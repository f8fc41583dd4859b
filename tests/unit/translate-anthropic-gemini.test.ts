import { describe, expect, it } from 'vitest';
import { anthropicToGemini as t, GEMINI_SIGNATURE_PREFIX } from '@/lib/gateway/translate/anthropic-gemini';
import type { CallInfo, UpstreamUsage } from '@/lib/gateway/translate/types';
import type { JsonObject } from '@/lib/gateway/body';
import { anthropicClientHarness, anthropicEvents, clientReq, sdkFinalMessage as sdkFinalMessageOf, testModel } from '../support/anthropic-client-harness';
import { sseEvents } from '../support/sse-fixtures';

const model = testModel;
const flash = model({ name: 'gemini-2.5-flash', ownedBy: 'google' });
const pro = model({ name: 'gemini-2.5-pro', ownedBy: 'google' });
const SIG = 'CiQBcsjafGmZ0yYq4nW7q0cuKCZtG0sXFvGm2QwW4YtmxcOmBBkKZgFyyNp8';

function callOf(stream = false, model = flash): CallInfo {
  return { model, stream, requestId: 'req_02xyz', created: 1764120000 };
}

const base = { model: 'gemini-2.5-flash', max_tokens: 1024 };

const { upstream, refusal, settle, reply, stream } = anthropicClientHarness(t, { callOf, base, fixtureDir: 'gemini', channel: 'gemini-main' });
const { messageStart, ev, textDelta, usage } = anthropicEvents('req_02xyz', 'gemini-2.5-flash');
const usageOf = (promptTokens: number, completionTokens: number, reasoningTokens: number, cacheReadTokens = 0): UpstreamUsage => ({
  promptTokens,
  completionTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
  reasoningTokens,
  completionFinal: true,
});

const sdkFinalMessage = (bytes: string) => sdkFinalMessageOf(bytes, 'gemini-2.5-flash');

describe('anthropic -> gemini: requests', () => {
  it('maps the system prompt, turns (roles user/model) and generation settings', () => {
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
            { type: 'text', text: 'Part two.' },
          ],
        },
        { role: 'user', content: 'Same role again.' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-7' },
    });
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello.' }] },
        { role: 'user', parts: [{ text: 'Part one.' }, { text: 'Part two.' }, { text: 'Same role again.' }] },
      ],
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }] },
      generationConfig: { maxOutputTokens: 1024, temperature: 0.3, topP: 0.9, topK: 40, stopSequences: ['END'] },
    });
  });

  it('maps tools to functionDeclarations with the JSON schema as written, and every tool_choice', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const tools = [
      { name: 'get_weather', description: 'Weather for a city', input_schema: schema },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ];
    const messages = [{ role: 'user', content: 'Weather?' }];
    expect(upstream({ messages, tools }).tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: schema },
          { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } },
        ],
      },
    ]);
    const cfg = (tool_choice: JsonObject) => upstream({ messages, tools, tool_choice }).toolConfig;
    expect(cfg({ type: 'auto' })).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(cfg({ type: 'any' })).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(cfg({ type: 'none' })).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(cfg({ type: 'tool', name: 'get_time', disable_parallel_tool_use: true })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    });
    expect(upstream({ messages, tool_choice: { type: 'any' } })).not.toHaveProperty('toolConfig');
  });

  it('turns tool_use into functionCall parts and tool_result blocks into functionResponse parts named after the call', () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const body = upstream({
      messages: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Two cities.', signature: GEMINI_SIGNATURE_PREFIX + SIG },
            { type: 'tool_use', id: 'toolu_req_01_0', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_req_01_1', name: 'get_weather', input: { city: 'Tokyo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_req_01_0', content: '18°C' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_req_01_1',
              content: [
                { type: 'text', text: '24°C' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
              ],
            },
            { type: 'text', text: 'Compare them.' },
          ],
        },
        // History from a Claude model: its signature is not Gemini's, so Google's stand-in goes instead.
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Check Oslo.', signature: 'EqQBCkgIARABGAIiQLclaude' },
            { type: 'text', text: 'Checking Oslo.' },
            { type: 'tool_use', id: 'toolu_01D', name: 'lookup', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01D',
              content: [
                { type: 'text', text: 'not' },
                { type: 'text', text: 'found' },
              ],
              is_error: true,
            },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG },
          { functionCall: { name: 'get_weather', args: { city: 'Tokyo' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { result: '18°C' } } },
          { functionResponse: { name: 'get_weather', response: { result: '24°C' } } },
          { inlineData: { mimeType: 'image/png', data: png } },
          { text: 'Compare them.' },
        ],
      },
      {
        role: 'model',
        parts: [{ text: 'Checking Oslo.' }, { functionCall: { name: 'lookup', args: { city: 'Oslo' } }, thoughtSignature: 'skip_thought_signature_validator' }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { error: 'not\nfound' } } }] },
    ]);
  });

  it('maps images (inline data and URLs) and documents', () => {
    const body = upstream({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png?size=large' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/image' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain notes.' } },
            { type: 'text', text: 'Describe these.' },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png?size=large' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/image' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQK' } },
          { text: 'Plain notes.' },
          { text: 'Describe these.' },
        ],
      },
    ]);
  });

  it('maps thinking to thinkingConfig with includeThoughts, and structured output to a JSON response schema', () => {
    const messages = [{ role: 'user', content: 'Think.' }];
    const thinking = (json: JsonObject) => (upstream({ messages, ...json }).generationConfig as JsonObject).thinkingConfig;
    expect(thinking({ thinking: { type: 'enabled', budget_tokens: 10000 } })).toEqual({ thinkingBudget: 10000, includeThoughts: true });
    // Claude Code's "ultrathink" budget is above Gemini 2.5 Flash's ceiling.
    expect(thinking({ max_tokens: 64000, thinking: { type: 'enabled', budget_tokens: 31999 } })).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect((upstream({ messages, max_tokens: 64000 }).generationConfig as JsonObject).maxOutputTokens).toBe(16384);
    expect(thinking({ thinking: { type: 'adaptive' } })).toEqual({ thinkingBudget: -1, includeThoughts: true });
    expect(thinking({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })).toEqual({ thinkingBudget: 4096, includeThoughts: true });
    expect(thinking({ output_config: { effort: 'high' } })).toEqual({ thinkingBudget: 24576 });
    expect(thinking({ thinking: { type: 'disabled' } })).toBeUndefined();
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(upstream({ messages, output_config: { format: { type: 'json_schema', schema } } }).generationConfig).toEqual({
      maxOutputTokens: 1024,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('refuses what Gemini cannot carry with a 400 naming the parameter and the model', () => {
    const messages = [{ role: 'user', content: 'Hi' }];
    const cases: [JsonObject, string][] = [
      [{ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
      [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }, 'mcp_servers'],
      [{ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_011' } }] }] }, 'messages.0.content.0.source.type'],
      [{ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_unknown', content: 'x' }] }] }, 'messages.0.content.0.tool_use_id'],
      [
        { messages: [{ role: 'user', content: [{ type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'x' }] }] }] },
        'messages.0.content.0.type',
      ],
    ];
    for (const [json, param] of cases) {
      const err = refusal({ messages, ...json });
      expect(err.status).toBe(400);
      expect(err.param).toBe(param);
      expect(err.message).toContain(param);
      expect(err.message).toContain('gemini-2.5-flash');
    }
  });
});

describe('anthropic -> gemini: what Claude Code sends', () => {
  it('system messages that open the conversation join systemInstruction; later ones are user text in place', () => {
    const body = upstream({
      system: 'Top.',
      messages: [
        { role: 'system', content: 'Lead.' },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Env.' },
        { role: 'assistant', content: 'Hello.' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Top.' }, { text: 'Lead.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }, { text: 'Env.' }] },
      { role: 'model', parts: [{ text: 'Hello.' }] },
    ]);
  });

  it('thinking display "omitted" asks for a budget but no thought text; context_management is dropped and recorded', () => {
    const json = {
      messages: [{ role: 'user', content: 'Hi' }],
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'high' },
      context_management: { edits: [] },
    };
    expect((upstream(json).generationConfig as JsonObject).thinkingConfig).toEqual({ thinkingBudget: 24576 });
    expect(t.request(clientReq({ ...base, ...json }), callOf()).dropped).toEqual(['context_management']);
    expect(refusal({ ...json, thinking: { type: 'adaptive', display: 'loud' } }).param).toBe('thinking.display');
    const parallel = {
      ...base,
      messages: json.messages,
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    };
    expect(t.request(clientReq(parallel), callOf()).dropped).toEqual(['tool_choice.disable_parallel_tool_use']);
  });
});

describe('anthropic -> gemini: whole replies', () => {
  it('two function calls: tool_use blocks with minted ids, the thought signature on a thinking block before them, stop_reason tool_use', () => {
    const { r, body } = reply('reply-tools.json');
    expect(body.content).toEqual([
      { type: 'thinking', thinking: '', signature: GEMINI_SIGNATURE_PREFIX + SIG },
      { type: 'tool_use', id: 'toolu_req_02xyz_0', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      { type: 'tool_use', id: 'toolu_req_02xyz_1', name: 'get_weather', input: { city: 'Tokyo', unit: 'celsius' } },
    ]);
    expect(body.stop_reason).toBe('tool_use');
    expect(r.completion).toBe('{"city":"Paris","unit":"celsius"}{"city":"Tokyo","unit":"celsius"}');
    // The reply's history, sent back, gives Gemini its signature again.
    const again = upstream({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: body.content },
      ],
    });
    expect((again.contents as JsonObject[])[1]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }, thoughtSignature: SIG },
        { functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } },
      ],
    });
  });

  it('thought parts become a thinking block before the text', () => {
    const { r, body } = reply('reply-thinking.json', callOf(false, pro));
    expect(body.content).toEqual([
      { type: 'thinking', thinking: '**Comparing the decimals**\n\nThe tenths digit of 9.9 is 9 and of 9.11 is 1, so 9.9 is larger.', signature: '' },
      { type: 'text', text: '9.11 is smaller than 9.9.' },
    ]);
    expect(r.usage).toEqual(usageOf(21, 198, 187));
  });

  it('cachedContentTokenCount comes back as cache_read_input_tokens, input_tokens the uncached rest', () => {
    const { r, body } = reply('reply-cache.json');
    expect(r.usage).toEqual(usageOf(258, 47, 40, 2048));
    expect(body.usage).toEqual(usage(258, 47, 2048));
  });

  it('SAFETY is a refusal, MAX_TOKENS is max_tokens, a blocked prompt is an empty refusal', () => {
    expect(reply('reply-safety.json').body).toMatchObject({ content: [], stop_reason: 'refusal' });
    expect(reply('reply-max-tokens.json').body).toMatchObject({ content: [{ type: 'text', text: 'The history of Rome begins' }], stop_reason: 'max_tokens' });
    const blocked = t.response(
      JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }),
      callOf(),
    );
    expect(JSON.parse(blocked.render(settle(blocked.usage)))).toMatchObject({ content: [], stop_reason: 'refusal' });
  });
});

describe('anthropic -> gemini: streams', () => {
  it('two function calls in two events: a signed thinking block, then one tool_use block each with its whole input', async () => {
    const { out, events } = stream('stream-tools.sse');
    expect(events).toEqual([
      messageStart(),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: GEMINI_SIGNATURE_PREFIX + SIG } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_req_02xyz_0', name: 'get_weather', input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris","unit":"celsius"}' } }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_req_02xyz_1', name: 'get_weather', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Tokyo","unit":"celsius"}' } }),
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: usage(96, 94) }),
      ev('message_stop', {}),
    ]);
    const msg = await sdkFinalMessage(out);
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content.filter((b) => b.type === 'tool_use').map((b) => (b.type === 'tool_use' ? b.input : null))).toEqual([
      { city: 'Paris', unit: 'celsius' },
      { city: 'Tokyo', unit: 'celsius' },
    ]);
  });

  it('thought parts stream as a thinking block before the text block', async () => {
    const { st, out, events } = stream('stream-thinking.sse', callOf(true, pro));
    expect(events).toEqual([
      messageStart('gemini-2.5-pro'),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: '**Comparing the decimals**\n\n' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'The tenths digit of 9.9 is 9 and of 9.11 is 1, so 9.9 is larger.' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      textDelta(1, '9.11 is smaller'),
      textDelta(1, ' than 9.9.'),
      ev('content_block_stop', { index: 1 }),
      ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: usage(21, 198) }),
      ev('message_stop', {}),
    ]);
    expect(st.usage).toEqual(usageOf(21, 198, 187));
    expect((await sdkFinalMessage(out)).content.map((b) => b.type)).toEqual(['thinking', 'text']);
  });

  it('cache usage reaches message_delta', () => {
    const { st, events } = stream('stream-cache.sse');
    expect(st.usage).toEqual(usageOf(258, 47, 40, 2048));
    expect(events.at(-2)).toEqual(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: usage(258, 47, 2048) }));
  });
});

describe('anthropic -> gemini: errors', () => {
  it("puts Google's error into Anthropic's envelope, the status kept", () => {
    const g = (code: number, message: string, status: string) => JSON.stringify({ error: { code, message, status } });
    expect(t.error(400, g(400, '* GenerateContentRequest.contents: contents is not specified', 'INVALID_ARGUMENT'))).toEqual({
      status: 400,
      body: JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: '* GenerateContentRequest.contents: contents is not specified' },
      }),
    });
    expect(JSON.parse(t.error(404, g(404, 'models/gemini-9 is not found for API version v1beta', 'NOT_FOUND')).body)).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'models/gemini-9 is not found for API version v1beta' },
    });
    const arr = t.error(
      429,
      JSON.stringify([{ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }]),
    );
    expect(arr.status).toBe(429);
    expect(JSON.parse(arr.body).error).toEqual({ type: 'rate_limit_error', message: 'Resource has been exhausted (e.g. check quota).' });
  });
});

describe('anthropic -> gemini: against the fake Gemini upstream', () => {
  it('a tool conversation with thinking is accepted by Google-style validation, and the replies translate', async () => {
    const { startFakeUpstream } = await import('../support/fake-upstream');
    const fake = await startFakeUpstream();
    try {
      const post = async (body: string | Buffer, model: string, stream: boolean) =>
        fetch(`${fake.url}/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test' },
          body: String(body),
        });
      const tools = [
        {
          name: 'get_weather',
          description: 'Weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false },
        },
      ];
      const first = {
        ...base,
        system: 'Be brief.',
        tools,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      };
      const gemini3 = model({ name: 'gemini-3-pro-preview', ownedBy: 'google' });
      const call = callOf(false, gemini3);
      const res = await post(t.request(clientReq(first), call).body, gemini3.name, false);
      expect(res.status).toBe(200);
      const r = t.response(await res.text(), call);
      const msg = JSON.parse(r.render(settle(r.usage))) as { content: JsonObject[]; stop_reason: string };
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
      expect(String(msg.content[0].signature)).toMatch(new RegExp(`^${GEMINI_SIGNATURE_PREFIX}`));

      // The client sends the reply back with the tool's result: Gemini 3 needs the signature again.
      const toolUse = msg.content[1];
      const second = {
        ...first,
        messages: [
          ...first.messages,
          { role: 'assistant', content: msg.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
        ],
      };
      const sCall = callOf(true, gemini3);
      const res2 = await post(t.request(clientReq(second), sCall).body, gemini3.name, true);
      expect(res2.status).toBe(200);
      const st = t.stream(sCall, clientReq(second));
      let out = '';
      for (const e of sseEvents(await res2.text())) out += st.push(e);
      expect(st.finished).toBe(true);
      out += st.end(settle(st.usage));
      const final = await sdkFinalMessage(out);
      expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
      expect(final.content[1]).toEqual({ type: 'text', text: 'The tool said: {"result":"sunny"}' });
      expect(st.usage?.reasoningTokens).toBeGreaterThan(0);
    } finally {
      await fake.close();
    }
  });
});

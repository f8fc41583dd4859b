// OpenAI chat client -> Gemini upstream: request mapping, whole replies and streams from recorded
// Gemini bodies (tests/fixtures/gemini), the exact client-side output.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '@/lib/errors';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { openaiToGemini, SKIP_THOUGHT_SIGNATURE } from '@/lib/gateway/translate/openai-gemini';
import { geminiSchema } from '@/lib/gateway/translate/gemini-schema';
import type { CallInfo, Settlement } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { chunkOf, clientReq, refusalOf, sdkAnswering } from '../support/openai-client-harness';
import { fixtureText, parseDataStream, sseEvents } from '../support/sse-fixture';
import { describeOpenAiChatRobustness } from '../support/translator-robustness';

const model = modelInfo({ name: 'gemini-2.5-flash', ownedBy: 'google', maxOutputTokens: 65536 });
const call = (over: Partial<CallInfo> = {}): CallInfo => ({ model, stream: false, requestId: 'req_9c1e', created: 1764120500, ...over });

function upstream(json: Record<string, unknown>, over: Partial<CallInfo> = {}): Record<string, any> {
  const built = openaiToGemini.request(clientReq({ model: 'gemini-2.5-flash', ...json }), call(over));
  expect(built.headers ?? {}).toEqual({});
  return JSON.parse(String(built.body)) as Record<string, any>;
}

const refusal = (json: Record<string, unknown>): GatewayError => refusalOf(() => upstream(json));

const hi = [{ role: 'user', content: 'Hi' }];
const hiContents = [{ role: 'user', parts: [{ text: 'Hi' }] }];

const settled = (usage: Partial<Settlement['usage']> = {}): Settlement => ({
  usage: { promptTokens: 8, completionTokens: 31, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 22, ...usage },
  costUsd: '0.0000799',
  costCny: '0.00057528',
  channel: 'gemini-main',
  latencyMs: 640,
});

function runStream(fixture: string, clientJson: Record<string, unknown> = { messages: hi, stream: true }, s = settled()) {
  const st = openaiToGemini.stream(call({ stream: true }), clientReq(clientJson));
  let out = '';
  for (const ev of sseEvents(fixtureText(fixture))) out += st.push(ev);
  out += st.end(s);
  return { st, out };
}

const chunkBase = { id: 'chatcmpl-req_9c1e', object: 'chat.completion.chunk', created: 1764120500, model: 'gemini-2.5-flash' };
const chunk = chunkOf(chunkBase);

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['location'],
      additionalProperties: false,
    },
    strict: true,
  },
};

describe('OpenAI chat -> Gemini: request', () => {
  it('moves system and developer messages to systemInstruction, maps roles to user/model and defaults maxOutputTokens', () => {
    expect(
      upstream(
        {
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello.' },
            { role: 'developer', content: 'Answer in French.' },
            { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
          ],
          stream: true,
        },
        { stream: true },
      ),
    ).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello.' }] },
        { role: 'user', parts: [{ text: 'How are you?' }] },
      ],
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] },
      generationConfig: { maxOutputTokens: 65536 },
    });
  });

  it('sends a conversation of system messages only as the user turn', () => {
    expect(upstream({ messages: [{ role: 'system', content: 'Write a haiku about rain.' }] })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Write a haiku about rain.' }] }],
      generationConfig: { maxOutputTokens: 65536 },
    });
  });

  it('maps sampling, stop sequences, penalties and seed into generationConfig; drops user, store, metadata', () => {
    expect(
      upstream({
        messages: hi,
        temperature: 1.4,
        top_p: 0.9,
        max_completion_tokens: 500,
        stop: 'END',
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
        seed: 42,
        user: 'u1',
        store: true,
        metadata: { a: 'b' },
        parallel_tool_calls: true,
      }),
    ).toEqual({
      contents: hiContents,
      generationConfig: { temperature: 1.4, topP: 0.9, maxOutputTokens: 500, stopSequences: ['END'], presencePenalty: 0.5, frequencyPenalty: 0.25, seed: 42 },
    });
    expect(upstream({ messages: hi, max_tokens: 10_000_000 }).generationConfig.maxOutputTokens).toBe(65536);
  });

  it('declares function tools with their schema rewritten for Gemini and maps every tool_choice form', () => {
    const tools = [weather, { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }];
    const body = upstream({ messages: hi, tools });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather',
            parameters: {
              type: 'object',
              properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
              required: ['location'],
            },
          },
          { name: 'now' },
        ],
      },
    ]);
    expect(body.toolConfig).toBeUndefined();
    expect(upstream({ messages: hi, tools, tool_choice: 'auto' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(upstream({ messages: hi, tools, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(upstream({ messages: hi, tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(upstream({ messages: hi, tools, tool_choice: { type: 'function', function: { name: 'now' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] },
    });
  });

  it('replays tool calls as functionCall parts (thought signature kept, or the placeholder) and tool results as one user turn of functionResponse parts', () => {
    const body = upstream({
      messages: [
        { role: 'user', content: 'Weather in SF and NYC?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"San Francisco"}' },
              extra_content: { google: { thought_signature: 'SIG1' } },
            },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"location":"New York"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp_c":18,"sky":"fog"}' },
        { role: 'tool', tool_call_id: 'call_b', content: '24°C, sun' },
        { role: 'assistant', content: 'Foggy in SF, sunny in NYC.' },
        { role: 'user', content: 'And Paris?' },
        { role: 'assistant', tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_c', content: '12°C' },
      ],
      tools: [weather],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in SF and NYC?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { location: 'San Francisco' } }, thoughtSignature: 'SIG1' },
          { functionCall: { name: 'get_weather', args: { location: 'New York' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp_c: 18, sky: 'fog' } } },
          { functionResponse: { name: 'get_weather', response: { content: '24°C, sun' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'Foggy in SF, sunny in NYC.' }] },
      { role: 'user', parts: [{ text: 'And Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: SKIP_THOUGHT_SIGNATURE }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '12°C' } } }] },
    ]);
  });

  it('refuses a tool result whose tool_call_id names no earlier tool call (Gemini needs the function name)', () => {
    const err = refusal({ messages: [...hi, { role: 'tool', tool_call_id: 'call_zz', content: 'x' }] });
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[1].tool_call_id');
  });

  it('sends data-URL images inline and http URLs as fileData with a MIME type from the extension', () => {
    const body = upstream({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRh4AAABXRUJQ' } },
            { type: 'image_url', image_url: { url: 'https://example.com/img/cat.PNG?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render' } },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Compare these.' },
          { inlineData: { mimeType: 'image/webp', data: 'UklGRh4AAABXRUJQ' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/img/cat.PNG?size=large' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render' } },
        ],
      },
    ]);
  });

  it('maps JSON mode to responseMimeType, and a json_schema to responseSchema', () => {
    expect(upstream({ messages: hi, response_format: { type: 'json_object' } }).generationConfig).toEqual({
      maxOutputTokens: 65536,
      responseMimeType: 'application/json',
    });
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, sources: { type: 'array', items: { type: 'string', format: 'uri' } } },
      required: ['answer', 'sources'],
      additionalProperties: false,
    };
    expect(upstream({ messages: hi, response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } }).generationConfig).toEqual({
      maxOutputTokens: 65536,
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'object',
        properties: { answer: { type: 'string' }, sources: { type: 'array', items: { type: 'string' } } },
        required: ['answer', 'sources'],
      },
    });
  });

  it('maps reasoning_effort to a thinking budget with thoughts included; none turns thinking off', () => {
    expect(upstream({ messages: hi, reasoning_effort: 'low' }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(upstream({ messages: hi, reasoning_effort: 'medium' }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192, includeThoughts: true });
    expect(upstream({ messages: hi, reasoning_effort: 'high' }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(upstream({ messages: hi, reasoning_effort: 'high', max_tokens: 4000 }).generationConfig.thinkingConfig).toEqual({
      thinkingBudget: 4000,
      includeThoughts: true,
    });
    expect(upstream({ messages: hi, reasoning_effort: 'none' }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect(upstream({ messages: hi }).generationConfig.thinkingConfig).toBeUndefined();
  });

  it.each([
    [{ n: 3 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 2 }, 'top_logprobs'],
    [{ modalities: ['audio'] }, 'modalities'],
    [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] }, 'messages[0].content[0]'],
    [{ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }, 'messages[0].content[0].file'],
  ])('refuses %j with a 400 naming %s and the model', (extra, param) => {
    const err = refusal({ messages: hi, ...extra });
    expect(err.status).toBe(400);
    expect(err.param).toBe(param);
    expect(err.message).toContain('gemini-2.5-flash');
  });
});

describe('JSON Schema -> Gemini Schema', () => {
  it('inlines $defs references, turns Optional (anyOf with null) and type unions into nullable, const into enum, and drops unknown keys', () => {
    const pydantic = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Order',
      type: 'object',
      $defs: {
        Item: {
          type: 'object',
          properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1, format: 'int32' } },
          required: ['sku', 'qty'],
          additionalProperties: false,
        },
      },
      properties: {
        items: { type: 'array', items: { $ref: '#/$defs/Item' } },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'Free text' },
        priority: { type: ['integer', 'null'] },
        kind: { const: 'order' },
        homepage: { type: 'string', format: 'uri' },
      },
      required: ['items', 'kind', 'missing'],
      additionalProperties: false,
    };
    expect(geminiSchema(pydantic)).toEqual({
      title: 'Order',
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1, format: 'int32' } }, required: ['sku', 'qty'] },
        },
        note: { type: 'string', default: null, description: 'Free text', nullable: true },
        priority: { type: 'integer', nullable: true },
        kind: { type: 'string', enum: ['order'] },
        homepage: { type: 'string' },
      },
      required: ['items', 'kind'],
    });
  });

  it('moves enum values of a non-string type into the description (Gemini takes enum on strings only)', () => {
    expect(
      geminiSchema({
        type: 'object',
        properties: { level: { type: 'integer', enum: [1, 2, 3], description: 'Severity.' }, mode: { type: 'string', enum: ['a', 'b'] } },
      }),
    ).toEqual({
      type: 'object',
      properties: { level: { type: 'integer', description: 'Severity. Allowed values: 1, 2, 3.' }, mode: { type: 'string', enum: ['a', 'b'] } },
    });
  });

  it('ends a recursive reference as a bare object instead of looping', () => {
    const tree = {
      type: 'object',
      $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
      properties: { root: { $ref: '#/$defs/Node' } },
    };
    expect(JSON.stringify(geminiSchema(tree)).length).toBeLessThan(2000);
  });

  // Issue 37: a self-referencing definition fanned out ten ways inlined to 10^8 nodes (110 s of
  // CPU, then out of memory). Translation now stops at its budget: a 400 naming the field, in
  // milliseconds of CPU (the bound is generous so that it holds on a loaded machine).
  const fanOut = (n: number) => ({
    $defs: { a: { type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { $ref: '#/$defs/a' }])) } },
    properties: { root: { $ref: '#/$defs/a' } },
  });

  it.each([10, 6])('refuses a $defs fan-out of %i as over the budget, within a CPU-time budget', (n) => {
    for (const json of [
      { messages: hi, tools: [weather, { type: 'function', function: { name: 'walk', parameters: fanOut(n) } }] },
      { messages: hi, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: fanOut(n) } } },
    ]) {
      const cpu = process.cpuUsage();
      const err = refusal(json);
      const used = process.cpuUsage(cpu);
      expect(err.status).toBe(400);
      expect(err.param).toBe(json.tools ? 'tools[1].function.parameters' : 'response_format.json_schema.schema');
      expect(err.message).toContain('too large');
      expect((used.user + used.system) / 1000).toBeLessThan(200);
    }
  });

  it('shares the budget across the schemas of one request, and keeps a malformed reference from throwing', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f${i}`, { type: 'string' }])) };
    const tool = (i: number) => ({ type: 'function', function: { name: `t${i}`, parameters: wide } });
    expect(upstream({ messages: hi, tools: [tool(0), tool(1)] }).tools[0].functionDeclarations).toHaveLength(2);
    expect(refusal({ messages: hi, tools: [0, 1, 2, 3, 4].map(tool) }).param).toBe('tools[3].function.parameters');
    expect(geminiSchema({ properties: { x: { $ref: '#/$defs/%E0' } } })).toEqual({ properties: { x: { type: 'object' } } });
  });
});

describe('OpenAI chat -> Gemini: whole replies', () => {
  it('renders parallel function calls as tool_calls with minted ids, finish_reason tool_calls and the thought signature carried', async () => {
    const reply = openaiToGemini.response(fixtureText('gemini/flash-parallel-tools.json'), call());
    expect(reply.usage).toMatchObject({ promptTokens: 96, completionTokens: 91, reasoningTokens: 55 });
    const body = JSON.parse(reply.render(settled({ promptTokens: 96, completionTokens: 91, reasoningTokens: 55 }))) as Record<string, any>;
    expect(body.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: 'call_req_9c1e_0',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
              extra_content: { google: { thought_signature: 'CiQB0e2Kb4VJ1tYzwh5Yc5B4NG8nM0NHPN9Ha1zjdZ4q9zxAWX0KYwHR7YpvY0nqRmQw' } },
            },
            { id: 'call_req_9c1e_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"New York, NY","unit":"celsius"}' } },
          ],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    // The client sends the message back as it got it: the signature reaches Gemini again.
    const next = upstream({
      messages: [
        ...hi,
        body.choices[0].message,
        { role: 'tool', tool_call_id: 'call_req_9c1e_0', content: '18' },
        { role: 'tool', tool_call_id: 'call_req_9c1e_1', content: '24' },
      ],
    });
    expect(next.contents[1].parts[0].thoughtSignature).toBe('CiQB0e2Kb4VJ1tYzwh5Yc5B4NG8nM0NHPN9Ha1zjdZ4q9zxAWX0KYwHR7YpvY0nqRmQw');
    expect(next.contents[1].parts[1].thoughtSignature).toBeUndefined();
    const sdk = sdkAnswering(reply.render(settled()), 'application/json');
    const completion = await sdk.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
  });

  it('returns thought parts as reasoning_content', () => {
    const reply = openaiToGemini.response(fixtureText('gemini/pro-thinking.json'), call());
    const body = JSON.parse(reply.render(settled({ promptTokens: 12, completionTokens: 298, reasoningTokens: 287 }))) as Record<string, any>;
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: '27 × 453 = 12,231.',
      refusal: null,
      reasoning_content: '**Multiplying step by step**\n\n27 × 453 = 27 × 400 + 27 × 53 = 10800 + 1431 = 12231.',
    });
    expect(body.usage.completion_tokens_details).toEqual({ reasoning_tokens: 287 });
    expect(reply.usage).toEqual({
      promptTokens: 12,
      completionTokens: 298,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 287,
      completionFinal: true,
    });
  });

  it('bills cached content apart (promptTokenCount minus cachedContentTokenCount) and shows it as cached_tokens; MAX_TOKENS -> length', () => {
    const reply = openaiToGemini.response(fixtureText('gemini/flash-cache.json'), call());
    expect(reply.usage).toEqual({
      promptTokens: 262,
      completionTokens: 16,
      cacheReadTokens: 1872,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      completionFinal: true,
    });
    const body = JSON.parse(reply.render(settled({ promptTokens: 262, completionTokens: 16, cacheReadTokens: 1872, reasoningTokens: 0 }))) as Record<
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

  it('maps safety stops and a blocked prompt to content_filter; a reply without candidates or JSON is a protocol failure', () => {
    const base = JSON.parse(fixtureText('gemini/flash-text.json')) as Record<string, any>;
    const safety = { ...base, candidates: [{ ...base.candidates[0], content: undefined, finishReason: 'SAFETY' }] };
    const safetyBody = JSON.parse(openaiToGemini.response(JSON.stringify(safety), call()).render(settled())) as Record<string, any>;
    expect(safetyBody.choices[0]).toMatchObject({ message: { content: '' }, finish_reason: 'content_filter' });
    const blocked = { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } };
    const blockedReply = openaiToGemini.response(JSON.stringify(blocked), call());
    expect(blockedReply.usage).toMatchObject({ promptTokens: 9, completionTokens: 0 });
    expect((JSON.parse(blockedReply.render(settled())) as Record<string, any>).choices[0].finish_reason).toBe('content_filter');
    expect(() => openaiToGemini.response('{"modelVersion":"x"}', call())).toThrow(expect.objectContaining({ kind: 'protocol' }));
    expect(() => openaiToGemini.response('not json', call())).toThrow(UpstreamFailure);
  });
});

describe('OpenAI chat -> Gemini: streams', () => {
  it('streams two function calls as tool calls 0 and 1 with minted ids (the same as in a whole reply), then finish_reason tool_calls and the usage chunk', async () => {
    const { st, out } = runStream(
      'gemini/flash-parallel-tools.sse',
      { messages: hi, stream: true, stream_options: { include_usage: true } },
      settled({ promptTokens: 96, completionTokens: 91, reasoningTokens: 55 }),
    );
    expect(st.completion).toBe('{"location":"San Francisco, CA","unit":"celsius"}{"location":"New York, NY","unit":"celsius"}');
    expect(parseDataStream(out).chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'call_req_9c1e_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '' },
            extra_content: { google: { thought_signature: 'CiQB0e2Kb4VJ1tYzwh5Yc5B4NG8nM0NHPN9Ha1zjdZ4q9zxAWX0KYwHR7YpvY0nqRmQw' } },
          },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_req_9c1e_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"location":"New York, NY","unit":"celsius"}' } }] }),
      chunk({}, 'tool_calls'),
      {
        ...chunkBase,
        choices: [],
        usage: {
          prompt_tokens: 96,
          completion_tokens: 91,
          total_tokens: 187,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 55 },
          cost_usd: 0.0000799,
          cost_cny: 0.00057528,
        },
      },
    ]);
    const final = await sdkAnswering(out, 'text/event-stream')
      .chat.completions.stream({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }], stream: true })
      .finalChatCompletion();
    const calls = final.choices[0].message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : null))).toEqual([
      ['call_req_9c1e_0', 'get_weather', { location: 'San Francisco, CA', unit: 'celsius' }],
      ['call_req_9c1e_1', 'get_weather', { location: 'New York, NY', unit: 'celsius' }],
    ]);
  });

  it('streams thought parts as reasoning_content deltas; the growing usage ends final', () => {
    const { st, out } = runStream('gemini/pro-thinking.sse');
    expect(parseDataStream(out).chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: '**Multiplying step by step**\n\n27 × 453 = 27 × 400 + 27 × 53' }),
      chunk({ reasoning_content: ' = 10800 + 1431 = 12231.' }),
      chunk({ content: '27 × 453 = 12,231.' }),
      chunk({}, 'stop'),
    ]);
    expect(st.usage).toEqual({ promptTokens: 12, completionTokens: 298, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 287, completionFinal: true });
  });

  it('reports cached content tokens apart in a stream and MAX_TOKENS as length', () => {
    const { st, out } = runStream(
      'gemini/flash-cache.sse',
      { messages: hi, stream: true, stream_options: { include_usage: true } },
      settled({ promptTokens: 262, completionTokens: 16, cacheReadTokens: 1872, reasoningTokens: 0 }),
    );
    expect(st.usage).toEqual({
      promptTokens: 262,
      completionTokens: 16,
      cacheReadTokens: 1872,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      completionFinal: true,
    });
    const { chunks } = parseDataStream(out);
    expect(chunks.at(-2)).toEqual(chunk({}, 'length'));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2134, prompt_tokens_details: { cached_tokens: 1872 } } });
  });

  it('sends nothing for an event without content (the role chunk waits for the first content)', () => {
    const st = openaiToGemini.stream(call({ stream: true }), clientReq({ messages: hi, stream: true }));
    expect(
      st.push({
        event: 'message',
        data: '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8}}',
        raw: '',
      }),
    ).toBe('');
    expect(st.usage).toMatchObject({ promptTokens: 8, completionTokens: 0, completionFinal: false });
    expect(() => st.push({ event: 'message', data: '{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}', raw: '' })).toThrow(UpstreamFailure);
  });
});

describe('OpenAI chat -> Gemini: errors', () => {
  it('puts a Gemini error in the OpenAI envelope, keeping the status, with the Gemini status as code', () => {
    const e = openaiToGemini.error(400, fixtureText('gemini/flash-error.json'));
    expect(e.status).toBe(400);
    expect(JSON.parse(e.body)).toEqual({
      error: {
        message: '* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties[unit].enum: only allowed for STRING type\n',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_argument',
      },
    });
    const quota = openaiToGemini.error(
      429,
      '[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]',
    );
    expect(quota.status).toBe(429);
    expect(JSON.parse(quota.body).error).toEqual({
      message: 'Resource has been exhausted (e.g. check quota).',
      type: 'rate_limit',
      param: null,
      code: 'resource_exhausted',
    });
    expect(openaiToGemini.error(404, 'Not Found').status).toBe(404);
  });
});

describeOpenAiChatRobustness('OpenAI chat -> Gemini: robustness', { translator: openaiToGemini, call, clientReq, refusal, settled });

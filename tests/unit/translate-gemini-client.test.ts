// The Gemini surface's translators: Gemini client -> OpenAI chat, Anthropic Messages and Gemini
// (identity). Requests as each upstream receives them, replies and streams (recorded upstream
// streams) as a Gemini client reads them, thought signatures across turns, errors; and Gemini
// CLI's recorded requests replayed through every translator.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { geminiToOpenai } from '@/lib/gateway/translate/gemini-openai';
import { geminiToAnthropic } from '@/lib/gateway/translate/gemini-anthropic';
import { geminiToGemini } from '@/lib/gateway/translate/gemini-gemini';
import { ANTHROPIC_SIGNATURE_PREFIX, jsonSchemaOf, openThinking, sealThinking, type GeminiClientOptions } from '@/lib/gateway/translate/gemini-client';
import { GatewayError } from '@/lib/errors';
import type { CallInfo, ClientRequest, Settlement, Translator } from '@/lib/gateway/translate/types';
import type { JsonObject } from '@/lib/gateway/body';
import { modelInfo } from '../support/model-info';
import { fixture, sseEvents } from '../support/sse-fixtures';

const SSE: GeminiClientOptions = { framing: 'sse', includeThoughts: false };
const gpt = modelInfo({ name: 'gpt-4o', ownedBy: 'openai', maxOutputTokens: 16384 });
const claude = modelInfo({ name: 'claude-sonnet-4-5', ownedBy: 'anthropic', protocol: 'anthropic', maxOutputTokens: 64000 });
const flash = modelInfo({ name: 'gemini-2.5-flash', ownedBy: 'google', protocol: 'gemini' });

const callOf = (model = gpt, stream = false): CallInfo => ({ model, stream, requestId: 'req_g1', created: 1764120000 });

function req(json: JsonObject): ClientRequest {
  const text = JSON.stringify(json);
  return { body: { raw: Buffer.from(text), text, json, verbatim: true } as ClientRequest['body'], headers: {} };
}

const settled: Settlement = {
  usage: { promptTokens: 40, completionTokens: 12, cacheReadTokens: 10, cacheWriteTokens: 0, reasoningTokens: 4 },
  costUsd: '0.0001',
  costCny: '0.0007',
  channel: 'c',
  latencyMs: 5,
};

const upstreamOf = (t: Translator, json: JsonObject, model = gpt, stream = false) => {
  const call = t.request(req(json), callOf(model, stream));
  return { body: JSON.parse(call.body.toString()) as JsonObject, dropped: call.dropped, headers: call.headers };
};

/** A translated stream's client bytes, as the SDKs split them (`data: ` events; ours end in CRLF CRLF, Google's relayed as they came). */
function streamChunks(t: Translator, sse: string, model = gpt): JsonObject[] {
  const st = t.stream(callOf(model, true), req({ contents: [] }));
  let out = '';
  for (const ev of sseEvents(sse)) out += st.push(ev);
  expect(st.finished).toBe(true);
  out += st.end(settled);
  return out
    .split(/\r?\n\r?\n/)
    .filter((b) => b !== '')
    .map((b) => {
      expect(b.startsWith('data: ')).toBe(true);
      return JSON.parse(b.slice(6)) as JsonObject;
    });
}

const partsOf = (chunk: JsonObject) => ((chunk.candidates as JsonObject[])[0].content as { parts: JsonObject[] }).parts;

const TOOLS = [
  {
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'Weather',
        parameters: { type: 'OBJECT', properties: { city: { type: 'STRING', nullable: true } }, required: ['city'] },
      },
      { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } } } },
      { name: 'ping' },
    ],
  },
];

describe('gemini -> openai', () => {
  const t = geminiToOpenai(SSE);

  it('maps systemInstruction, turns, generation settings and thinking; drops what OpenAI has no field for', () => {
    const { body, dropped } = upstreamOf(t, {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
        { role: 'model', parts: [{ text: 'thinking...', thought: true }, { text: 'Hello.' }] },
        { parts: [{ text: 'Again' }] },
      ],
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        maxOutputTokens: 300,
        stopSequences: ['END'],
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { a: { type: 'INTEGER' } } },
        thinkingConfig: { thinkingBudget: 20000, includeThoughts: true },
        mediaResolution: 'MEDIA_RESOLUTION_LOW',
      },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      futureMember: { on: true },
    });
    expect(body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Again' },
      ],
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'response', schema: { type: 'object', properties: { a: { type: 'integer' } } }, strict: false },
      },
      reasoning_effort: 'high',
    });
    expect(dropped).toEqual(['safetySettings', 'futureMember', 'generationConfig.mediaResolution', 'generationConfig.topK']);
  });

  it('function declarations as tools; ANY with allowedFunctionNames forces the one, NONE forbids; calls and results paired by id', () => {
    const one = upstreamOf(t, {
      contents: [{ role: 'user', parts: [{ text: 'Time?' }] }],
      tools: TOOLS,
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } },
    }).body;
    expect(one.tools).toEqual([{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } }]);
    expect(one.tool_choice).toEqual({ type: 'function', function: { name: 'get_time' } });

    const all = upstreamOf(t, { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }).body;
    expect((all.tools as JsonObject[]).map((x) => (x.function as JsonObject).name)).toEqual(['get_weather', 'get_time', 'ping']);
    expect((all.tools as JsonObject[])[0]).toEqual({
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather',
        parameters: { type: 'object', properties: { city: { type: ['string', 'null'] } }, required: ['city'] },
      },
    });
    expect((all.tools as JsonObject[])[2]).toEqual({ type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } });
    expect(all.tool_choice).toBe('required');
    expect(
      upstreamOf(t, { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'NONE' } } }).body.tool_choice,
    ).toBe('none');

    const loop = upstreamOf(t, {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { id: 'c2', name: 'get_weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'c2', name: 'get_weather', response: { output: 'rain' } } },
            { functionResponse: { name: 'get_weather', response: { temp: 20 } } },
          ],
        },
      ],
      tools: TOOLS,
    }).body;
    const messages = loop.messages as JsonObject[];
    const ids = ((messages[1].tool_calls as JsonObject[]) ?? []).map((c) => c.id);
    expect(ids[1]).toBe('c2');
    // Ids OpenAI would refuse (over 40 characters, other characters) go as a digest, the same on the call and its result.
    const long = upstreamOf(t, {
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ functionCall: { id: 'run_shell_command.1795825513311.0-with-a-very-long-suffix', name: 'ping', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'run_shell_command.1795825513311.0-with-a-very-long-suffix', name: 'ping', response: {} } }] },
      ],
    }).body.messages as JsonObject[];
    const longId = ((long[1].tool_calls as JsonObject[])[0].id as string) ?? '';
    expect(longId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(long[2]).toEqual({ role: 'tool', tool_call_id: longId, content: '{}' });
    expect(messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c2', content: 'rain' },
      { role: 'tool', tool_call_id: ids[0], content: '{"temp":20}' },
    ]);
  });

  it('refuses what cannot be served faithfully: a result with no call, a second candidate, an undeclared allowed function', () => {
    const cases: [JsonObject, string][] = [
      [{ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] }, 'contents.0.parts.0.functionResponse'],
      [{ contents: [{ parts: [{ text: 'x' }] }], generationConfig: { candidateCount: 2 } }, 'generationConfig.candidateCount'],
      [
        { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['nope'] } } },
        'toolConfig.functionCallingConfig.allowedFunctionNames',
      ],
      [{ contents: [{ parts: [{ executableCode: { code: '1' } }] }] }, 'contents.0.parts.0.executableCode'],
    ];
    for (const [json, param] of cases) {
      let err: unknown;
      try {
        t.request(req(json), callOf());
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).param).toBe(param);
      expect((err as GatewayError).status).toBe(400);
    }
  });

  it('a whole reply: text and function calls as parts, usageMetadata from the settled usage', () => {
    const reply = t.response(fixture('openai/reply-tools.json'), callOf());
    expect(reply.usage).toMatchObject({ promptTokens: 82, completionTokens: 51 });
    const out = JSON.parse(reply.render(settled)) as JsonObject;
    expect(out).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { id: 'call_Qe3Vw8nZ1pL0sKjT4rYbX2aF', name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } } },
              { functionCall: { id: 'call_M7cR2dH9kW5vN1qJ8tPzE6gU', name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 8, totalTokenCount: 62, cachedContentTokenCount: 10, thoughtsTokenCount: 4 },
      modelVersion: 'gpt-4o',
      responseId: 'req_g1',
    });
  });

  it('a stream: text as it comes, each call whole, finishReason and usageMetadata in the last chunk', () => {
    const text = streamChunks(t, fixture('openai/stream-text.sse'));
    const last = text.at(-1)!;
    expect((last.candidates as JsonObject[])[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toEqual({
      promptTokenCount: 50,
      candidatesTokenCount: 8,
      totalTokenCount: 62,
      cachedContentTokenCount: 10,
      thoughtsTokenCount: 4,
    });
    expect(text.slice(0, -1).every((c) => c.usageMetadata === undefined && partsOf(c).length > 0)).toBe(true);
    expect(
      text
        .slice(0, -1)
        .map((c) => partsOf(c)[0].text)
        .join(''),
    ).toBe((JSON.parse(fixture('openai/reply-text.json')) as { choices: { message: { content: string } }[] }).choices[0].message.content);

    const tools = streamChunks(t, fixture('openai/stream-tools.sse'));
    const calls = tools.flatMap((c) => partsOf(c).filter((p) => p.functionCall));
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(typeof ((c.functionCall as JsonObject).args as JsonObject).city).toBe('string');
  });

  it('reasoning goes to the client as thought parts only when includeThoughts asks', () => {
    const shown = streamChunks(geminiToOpenai({ framing: 'sse', includeThoughts: true }), fixture('openai/stream-reasoning.sse'));
    const hidden = streamChunks(t, fixture('openai/stream-reasoning.sse'));
    expect(shown.some((c) => partsOf(c).some((p) => p.thought === true))).toBe(true);
    expect(hidden.some((c) => partsOf(c).some((p) => p.thought === true))).toBe(false);
  });

  it('an upstream 4xx in Google\u2019s envelope', () => {
    const err = t.error(400, JSON.stringify({ error: { message: 'Bad things', type: 'invalid_request_error' } }));
    expect(err).toEqual({ status: 400, body: JSON.stringify({ error: { code: 400, message: 'Bad things', status: 'INVALID_ARGUMENT' } }) });
    expect(JSON.parse(t.error(429, 'slow down').body)).toEqual({ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } });
  });

  it('the JSON-array stream (no alt=sse) is one JSON array of the same chunks', () => {
    const st = geminiToOpenai({ framing: 'array', includeThoughts: false }).stream(callOf(gpt, true), req({ contents: [] }));
    let out = '';
    for (const ev of sseEvents(fixture('openai/stream-text.sse'))) out += st.push(ev);
    out += st.end(settled);
    const chunks = JSON.parse(out) as JsonObject[];
    expect((chunks.at(-1)!.candidates as JsonObject[])[0].finishReason).toBe('STOP');
  });
});

describe('gemini -> anthropic', () => {
  const t = geminiToAnthropic(SSE);

  it('maps the conversation: system, results first in the user turn, max_tokens, thinking with the sampling knobs left out', () => {
    const { body, dropped, headers } = upstreamOf(
      t,
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Weather?' }] },
          { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ text: 'Quickly.' }, { functionResponse: { name: 'get_weather', response: { error: 'offline' } } }] },
        ],
        tools: TOOLS,
        generationConfig: { temperature: 1, topK: 64, thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } },
      },
      claude,
    );
    expect(headers).toEqual({ 'anthropic-version': '2023-06-01' });
    const id = (((body.messages as JsonObject[])[1].content as JsonObject[])[1] as JsonObject).id;
    expect(body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 64000,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: id, content: '{"error":"offline"}', is_error: true },
            { type: 'text', text: 'Quickly.' },
          ],
        },
      ],
    });
    // Mid tool loop without the turn's signed thinking, Anthropic would refuse thinking: the call goes without.
    expect(body.thinking).toBeUndefined();
    expect(body.temperature).toBe(1);
    expect(dropped).toBeUndefined();

    const fresh = upstreamOf(
      t,
      { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { temperature: 1, topK: 64, thinkingConfig: { thinkingBudget: 8192 } } },
      claude,
    );
    expect(fresh.body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(fresh.body.temperature).toBeUndefined();
    expect(fresh.dropped).toEqual(['generationConfig.temperature', 'generationConfig.topK']);
  });

  it('ANY forces a tool (one allowed: that tool), NONE forbids', () => {
    const any = upstreamOf(t, { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }, claude).body;
    expect(any.tool_choice).toEqual({ type: 'any' });
    const named = upstreamOf(
      t,
      { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['ping'] } } },
      claude,
    ).body;
    expect(named.tool_choice).toEqual({ type: 'tool', name: 'ping' });
    expect(named.tools).toEqual([{ name: 'ping', input_schema: { type: 'object', properties: {} } }]);
    const none = upstreamOf(t, { contents: [{ parts: [{ text: 'x' }] }], tools: TOOLS, toolConfig: { functionCallingConfig: { mode: 'NONE' } } }, claude).body;
    expect(none.tool_choice).toEqual({ type: 'none' });
  });

  it('signed thinking rides on the function call as a thoughtSignature and comes back as the thinking block on the next turn', () => {
    const sse = fixture('anthropic/thinking.sse').replace(
      /event: content_block_start\ndata: \{"type":"content_block_start","index":1,"content_block":\{"type":"text".*?\n\n/s,
      'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}\n\n',
    );
    const chunks = streamChunks(
      geminiToAnthropic({ framing: 'sse', includeThoughts: true }),
      sse.replace(/"type":"text_delta","text":"[^"]*"/, '"type":"input_json_delta","partial_json":"{\\"city\\":\\"Paris\\"}"'),
      claude,
    );
    const parts = chunks.flatMap(partsOf);
    expect(parts[0]).toEqual({ text: '27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.', thought: true });
    const call = parts.find((p) => p.functionCall)!;
    expect(call.functionCall).toEqual({ id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } });
    const signature = call.thoughtSignature as string;
    expect(signature.startsWith(ANTHROPIC_SIGNATURE_PREFIX)).toBe(true);
    expect(openThinking(signature)).toEqual([
      {
        type: 'thinking',
        thinking: '27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds1ZqqCWmZlrtxqCVGcF6pCZjMOgYVCKSvVUXoVYrwIZRjGYPVh8UmN5uWfcVJTe0IjyA',
      },
    ]);

    // The client sends the model turn back as it got it (Gemini CLI leaves out the thought parts).
    const next = upstreamOf(
      t,
      {
        contents: [
          { role: 'user', parts: [{ text: 'Weather?' }] },
          { role: 'model', parts: [call] },
          { role: 'user', parts: [{ functionResponse: { id: 'toolu_1', name: 'get_weather', response: { output: 'sunny' } } }] },
        ],
        tools: TOOLS,
        generationConfig: { thinkingConfig: { thinkingBudget: 4096 } },
      },
      claude,
    ).body;
    const assistant = (next.messages as JsonObject[])[1].content as JsonObject[];
    expect(assistant[0]).toEqual(openThinking(signature)![0]);
    expect(assistant[1]).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } });
    // The turn's thinking came back: thinking stays on in the tool loop.
    expect(next.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
  });

  it('a stream of text and tool use: calls whole, the finish and usage last', () => {
    const chunks = streamChunks(t, fixture('anthropic/tools.sse'), claude);
    const parts = chunks.flatMap(partsOf);
    expect(
      parts
        .filter((p) => typeof p.text === 'string')
        .map((p) => p.text)
        .join(''),
    ).toBe("I'll check the weather in both cities.");
    const calls = parts.filter((p) => p.functionCall).map((p) => (p.functionCall as JsonObject).name);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((n) => n === 'get_weather')).toBe(true);
    expect((chunks.at(-1)!.candidates as JsonObject[])[0].finishReason).toBe('STOP');
    expect(chunks.at(-1)!.usageMetadata).toBeDefined();
  });

  it('a whole reply, max_tokens as MAX_TOKENS', () => {
    const reply = t.response(
      JSON.stringify({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Cut' }],
        stop_reason: 'max_tokens',
        usage: { input_tokens: 10, output_tokens: 5 },
      }),
      callOf(claude),
    );
    expect(reply.usage).toMatchObject({ promptTokens: 10, completionTokens: 5, completionFinal: true });
    const out = JSON.parse(reply.render(settled)) as JsonObject;
    expect((out.candidates as JsonObject[])[0]).toEqual({ content: { role: 'model', parts: [{ text: 'Cut' }] }, finishReason: 'MAX_TOKENS', index: 0 });
  });
});

describe('gemini -> gemini (identity)', () => {
  const t = geminiToGemini(SSE);

  it('forwards the client\u2019s bytes, unknown members and Google\u2019s own signatures included', () => {
    const json = {
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'CiQBcsjafGmZ0yYq' }] },
      ],
      safetySettings: [],
      futureField: { a: 1 },
    };
    const r = req(json);
    expect(t.request(r, callOf(flash)).body).toBe(r.body.raw);
  });

  it('replaces the signatures a Claude model\u2019s reply left, which Gemini would refuse', () => {
    const sig = sealThinking([{ type: 'thinking', thinking: 't', signature: 's' }]);
    const body = upstreamOf(t, { contents: [{ role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: sig }] }] }, flash).body;
    expect(((body.contents as JsonObject[])[0].parts as JsonObject[])[0].thoughtSignature).toBe('skip_thought_signature_validator');
  });

  it('relays the stream as it came and reads its usage; reframes it as an array without alt=sse', () => {
    const sse = fixture('gemini/flash-text.sse');
    const st = t.stream(callOf(flash, true), req({ contents: [] }));
    let out = '';
    for (const ev of sseEvents(sse)) out += st.push(ev);
    expect(st.finished).toBe(true);
    expect(st.usage?.completionFinal).toBe(true);
    expect(out.replace(/\r\n/g, '\n')).toBe(
      sseEvents(sse)
        .map((e) => e.raw)
        .join('')
        .replace(/\r\n/g, '\n'),
    );
    const arr = geminiToGemini({ framing: 'array', includeThoughts: false }).stream(callOf(flash, true), req({ contents: [] }));
    let text = '';
    for (const ev of sseEvents(sse)) text += arr.push(ev);
    text += arr.end(settled);
    expect((JSON.parse(text) as unknown[]).length).toBe(sseEvents(sse).filter((e) => e.data !== '').length);
  });
});

describe('Gemini schemas as JSON Schema', () => {
  it('lower-cases types, folds nullable into the type', () => {
    expect(jsonSchemaOf({ type: 'ARRAY', items: { type: 'STRING', nullable: true, enum: ['a'] }, propertyOrdering: ['x'] })).toEqual({
      type: 'array',
      items: { type: ['string', 'null'], enum: ['a'] },
    });
  });
});

interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: JsonObject;
}

/** What the real clients sent the gateway (npm run compat with COMPAT_RECORD), per client. */
function recorded(client: string): [string, Recorded][] {
  const dir = path.resolve(__dirname, '../fixtures/clients', client);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Recorded]);
}

describe.each(['gemini-cli', 'google-genai'])('%s: its recorded requests through every translator', (client) => {
  it.each(recorded(client).filter(([, r]) => !r.path.endsWith(':countTokens')))('%s', (_name, r) => {
    expect(r.path).toMatch(/^\/v1\/gemini\/v1(beta)?\/models\/[^:]+:(generateContent|streamGenerateContent\?alt=sse)$/);
    expect(r.headers['x-goog-api-key']).toBe('<redacted>');
    const stream = r.path.includes(':streamGenerateContent');

    const toOpenai = upstreamOf(geminiToOpenai(SSE), r.body, gpt, stream);
    const messages = toOpenai.body.messages as JsonObject[];
    expect((toOpenai.body.tools as JsonObject[]).some((x) => (x.function as JsonObject).name === 'write_file')).toBe(true);
    // Every call the conversation holds is answered by a tool message with its id, right after it.
    const callIds = messages.flatMap((m) => ((m.tool_calls as JsonObject[] | undefined) ?? []).map((c) => c.id));
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(callIds);
    if (client === 'gemini-cli') {
      expect(messages[0].role).toBe('system');
      expect(toOpenai.dropped).toEqual(['generationConfig.topK']);
    }

    const toClaude = upstreamOf(geminiToAnthropic(SSE), r.body, claude, stream);
    expect((toClaude.body.tools as JsonObject[]).every((x) => (x.input_schema as JsonObject).type === 'object')).toBe(true);
    const blocks = (toClaude.body.messages as JsonObject[]).flatMap((m) => (Array.isArray(m.content) ? (m.content as JsonObject[]) : []));
    expect(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)).toEqual(blocks.filter((b) => b.type === 'tool_use').map((b) => b.id));
    expect(toClaude.body.stream).toBe(stream ? true : undefined);

    const identity = geminiToGemini(SSE).request(req(r.body), callOf(flash, stream));
    expect(JSON.parse(identity.body.toString())).toEqual(r.body);

    // What the client gets back on each channel protocol, streamed or whole: a reply the SDKs read.
    for (const [t, model, upstream] of REPLIES) {
      const chunks = stream
        ? streamChunks(t, fixture(upstream.stream), model)
        : [JSON.parse(t.response(fixture(upstream.whole), callOf(model)).render(settled)) as JsonObject];
      const text = chunks
        .flatMap(partsOf)
        .map((p) => p.text ?? '')
        .join('');
      expect(text).toMatch(/^Hello/);
      expect((chunks.at(-1)!.candidates as JsonObject[])[0].finishReason).toBe('STOP');
      expect(chunks.at(-1)!.usageMetadata).toBeDefined();
    }
  });
});

const REPLIES: [Translator, typeof gpt, { stream: string; whole: string }][] = [
  [geminiToOpenai(SSE), gpt, { stream: 'openai/stream-text.sse', whole: 'openai/reply-text.json' }],
  [geminiToAnthropic(SSE), claude, { stream: 'anthropic/text.sse', whole: 'anthropic/text.json' }],
  [geminiToGemini(SSE), flash, { stream: 'gemini/stream-text.sse', whole: 'gemini/reply-text.json' }],
];

// One table of client cases per client surface (OpenAI chat, Anthropic Messages, Gemini, Responses), each run
// against every upstream protocol's fixture set (tests/support/upstream-replies.ts): what a client
// of the surface reads from a plain text answer (whole and streamed), a cut stream and an error
// event mid-stream, whichever protocol served it. The identity pair relays the upstream's bytes, so
// it takes the surface-side assertions; the exact bytes a translating pair writes are asserted for
// the others. Upstream-specific cases (request mapping, recorded tool and thinking replies) stay in
// the pair files.
import { describe, expect, it } from 'vitest';
import { chatTranslators, geminiTranslators } from '@/lib/gateway/translate';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { chatClientRequest, chatPlanOf, responsesTranslator, type ResponsesTurn } from '@/lib/gateway/translate/responses-chat';
import type { CallInfo, ClientRequest, Settlement, StreamTranslator, Translator, UpstreamProtocol, UpstreamUsage } from '@/lib/gateway/translate/types';
import type { JsonObject } from '@/lib/gateway/body';
import { anthropicEvents, clientReq as anthropicReq, sdkFinalMessage, testModel } from '../support/anthropic-client-harness';
import { chunkOf, clientReq as openaiReq, sdkAnswering } from '../support/openai-client-harness';
import { parseClientSse, sseEvents } from '../support/sse-fixtures';
import { parseDataStream } from '../support/sse-fixture';
import { upstreamReplies } from '../support/upstream-replies';

const UPSTREAMS: UpstreamProtocol[] = ['openai', 'anthropic', 'gemini'];
const MODEL_NAME: Record<UpstreamProtocol, string> = { openai: 'gpt-4o', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' };
const REQUEST_ID = 'req_t4b1e';
const CREATED = 1764120000;

const callOf = (up: UpstreamProtocol, stream = false): CallInfo => ({
  model: testModel({ name: MODEL_NAME[up], ownedBy: up, protocol: up }),
  stream,
  requestId: REQUEST_ID,
  created: CREATED,
});

/** What the pipeline settles from the upstream's usage (its own counts, a fixed cost). */
const settle = (u: UpstreamUsage | null): Settlement => ({
  usage: u ?? { promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  costUsd: '0.000243',
  costCny: '0.00174960',
  channel: 'main',
  latencyMs: 812,
});

/** Pushes `events`, returning the client's bytes. */
const pushAll = (st: StreamTranslator, events: ReturnType<typeof sseEvents>): string => events.map((e) => st.push(e)).join('');

/** The failure the last event of `events` throws. */
function failureOf(st: StreamTranslator, ev: ReturnType<typeof sseEvents>[number]): UpstreamFailure {
  try {
    st.push(ev);
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamFailure);
    return err as UpstreamFailure;
  }
  throw new Error('expected an UpstreamFailure');
}

/** The cases every surface takes from every upstream, with the surface's own reading of its bytes. */
interface Surface {
  translator(up: UpstreamProtocol): Translator;
  req: ClientRequest;
  streamReq: ClientRequest;
  /** The upstreams whose error event's status the pair keeps on the failure. */
  readsStatus: UpstreamProtocol[];
  /** The upstreams whose SSE `event: error` (not only an error in the data) the pair takes as a failure. */
  readsErrorEventName: UpstreamProtocol[];
}

function describeTextReplies(name: string, s: Surface, check: SurfaceChecks): void {
  describe(`${name} client: the same reply from every upstream`, () => {
    for (const up of UPSTREAMS) {
      const f = upstreamReplies[up];
      const t = s.translator(up);
      const translated = up !== name;

      it(`from ${up}: a plain text reply renders with the settled usage`, () => {
        const reply = t.response(f.text.whole, callOf(up));
        expect(reply.usage).toEqual(f.text.usage);
        expect(reply.completion).toBe(f.text.content);
        check.whole(reply.render(settle(reply.usage)), up, translated);
      });

      it(`from ${up}: a plain text stream reaches the client fragment by fragment, then its end`, async () => {
        const st = t.stream(callOf(up, true), s.streamReq);
        const out = pushAll(st, sseEvents(f.text.stream));
        expect(st.finished).toBe(true);
        expect(st.usage).toEqual(f.text.usage);
        expect(st.completion).toBe(f.text.content);
        await check.stream(out, st.end(settle(st.usage)), up, translated);
      });

      it(`from ${up}: a stream cut after its first event is not finished`, () => {
        const st = t.stream(callOf(up, true), s.streamReq);
        st.push(sseEvents(f.text.stream)[0]);
        expect(st.finished).toBe(false);
        if (f.text.usageAfterFirst === null) expect(st.usage).toBeNull();
        else expect(st.usage).toMatchObject(f.text.usageAfterFirst);
      });

      it(`from ${up}: two parallel tool calls reach the client whole, the finish saying so`, async () => {
        const reply = t.response(f.tools.whole, callOf(up));
        check.toolCalls(reply.render(settle(reply.usage)), f.tools.calls);
        const st = t.stream(callOf(up, true), s.streamReq);
        const out = pushAll(st, sseEvents(f.tools.stream));
        expect(st.finished).toBe(true);
        await check.streamedToolCalls(out + st.end(settle(st.usage)), f.tools.calls, up);
      });

      it(`from ${up}: a reply stopped by the output limit says so`, () => {
        const reply = t.response(f.maxTokens, callOf(up));
        expect(reply.completion).toBe(f.text.content);
        check.maxTokens(reply.render(settle(reply.usage)));
      });

      it(`from ${up}: an error event mid-stream is a status failure after the text so far, not finished`, () => {
        const st = t.stream(callOf(up, true), s.streamReq);
        const events = sseEvents(f.errorMidStream.stream);
        const out = pushAll(st, events.slice(0, -1));
        expect(st.completion).toBe(f.errorMidStream.deltas.join(''));
        if (f.errorMidStream.usageBefore === null) expect(st.usage).toBeNull();
        else expect(st.usage).toMatchObject(f.errorMidStream.usageBefore);
        const failure = failureOf(st, events.at(-1)!);
        expect(failure.kind).toBe('status');
        // Not every pair reads the status the error event carries (decision 066): the attempt's log row shows it where read.
        expect(failure.status).toBe(s.readsStatus.includes(up) ? f.errorMidStream.status : undefined);
        expect(failure.message).toContain(f.errorMidStream.says);
        expect(st.finished).toBe(false);
        check.textSoFar(out, f.errorMidStream.deltas, translated);
        // An event cut short is the channel's protocol failure, whatever came before.
        expect(failureOf(st, { event: 'message', data: '{"cut": [', raw: 'data: {"cut": [\n\n' })).toMatchObject({
          kind: 'protocol',
          message: expect.stringMatching(/malformed/),
        });
        // An SSE `error` event, whatever its data, is a status failure where the pair reads the event name (decision 066).
        const named = { event: 'error', data: '{"message":"overloaded"}', raw: '' };
        if (s.readsErrorEventName.includes(up)) expect(failureOf(st, named)).toMatchObject({ kind: 'status', message: expect.stringMatching(/stream error/) });
        // Elsewhere it is ignored, or relayed as it came (OpenAI's identity pair).
        else expect(st.push(named)).toBe(up === 'openai' && name === 'openai' ? 'data: {"message":"overloaded"}\n\n' : '');
      });
    }
  });
}

type ToolCall = { name: string; args: Record<string, unknown> };

interface SurfaceChecks {
  /** The rendered whole reply of the plain text answer. */
  whole(body: string, up: UpstreamProtocol, translated: boolean): void;
  /** The client bytes of the plain text stream (`beforeEnd`), and what end() wrote. */
  stream(beforeEnd: string, end: string, up: UpstreamProtocol, translated: boolean): Promise<void>;
  /** A whole reply of tool calls: the calls (names, parsed arguments) and the tool finish. */
  toolCalls(body: string, calls: ToolCall[]): void;
  /** The same, streamed. */
  streamedToolCalls(out: string, calls: ToolCall[], up: UpstreamProtocol): Promise<void>;
  /** A whole reply stopped by the output limit. */
  maxTokens(body: string): void;
  /** The client bytes written before an error event: the text so far, in its fragments. */
  textSoFar(out: string, deltas: string[], translated: boolean): void;
}

// OpenAI chat: a chat.completion with the settled usage and the service member (the cost a bare
// number); a stream of chat.completion.chunk events, the finish_reason, then [DONE].
const chunk = (up: UpstreamProtocol) => chunkOf({ id: `chatcmpl-${REQUEST_ID}`, object: 'chat.completion.chunk', created: CREATED, model: MODEL_NAME[up] });
const chatText = (chunks: Record<string, any>[]) => chunks.map((c) => (c.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? '').join('');

describeTextReplies(
  'openai',
  {
    translator: (up) => chatTranslators.openai[up]!,
    req: openaiReq({ messages: [{ role: 'user', content: 'Hi' }] }),
    streamReq: openaiReq({ messages: [{ role: 'user', content: 'Hi' }], stream: true }),
    readsStatus: ['anthropic', 'gemini'],
    readsErrorEventName: ['anthropic'],
  },
  {
    whole(text, up, translated) {
      const f = upstreamReplies[up].text;
      expect(text).toContain('"cost_usd":0.000243}');
      const body = JSON.parse(text) as Record<string, any>;
      expect(body.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: f.content }, finish_reason: 'stop' });
      expect(body.service).toEqual({ channel: 'main', latency_ms: 812, cost_usd: 0.000243 });
      if (!translated) return;
      const u = f.usage;
      expect(body).toEqual({
        id: `chatcmpl-${REQUEST_ID}`,
        object: 'chat.completion',
        created: CREATED,
        model: MODEL_NAME[up],
        choices: [{ index: 0, message: { role: 'assistant', content: f.content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: u.promptTokens,
          completion_tokens: u.completionTokens,
          total_tokens: u.promptTokens + u.completionTokens,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
        },
        service: { channel: 'main', latency_ms: 812, cost_usd: 0.000243 },
      });
    },
    async stream(beforeEnd, end, up, translated) {
      const f = upstreamReplies[up].text;
      const out = beforeEnd + end;
      const { chunks, done } = parseDataStream(out);
      expect(done).toBe(true);
      expect(chatText(chunks)).toBe(f.content);
      expect(chunks.filter((c) => (c.choices as unknown[]).length > 0).at(-1)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }] });
      if (translated) {
        // [DONE] only from end(), and no usage chunk unless the client asked for one.
        expect(beforeEnd.endsWith('data: [DONE]\n\n')).toBe(false);
        expect(chunks).toEqual([chunk(up)({ role: 'assistant', content: '' }), ...f.deltas.map((d) => chunk(up)({ content: d })), chunk(up)({}, 'stop')]);
      }
      const final = await sdkAnswering(out, 'text/event-stream')
        .chat.completions.stream({ model: MODEL_NAME[up], messages: [{ role: 'user', content: 'Hi' }], stream: true })
        .finalChatCompletion();
      expect(final.choices[0].message.content).toBe(f.content);
    },
    toolCalls(text, calls) {
      const choice = (JSON.parse(text) as Record<string, any>).choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      expect(
        (choice.message.tool_calls as Record<string, any>[]).map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) as unknown })),
      ).toEqual(calls);
    },
    async streamedToolCalls(out, calls, up) {
      const final = await sdkAnswering(out, 'text/event-stream')
        .chat.completions.stream({ model: MODEL_NAME[up], messages: [{ role: 'user', content: 'x' }], stream: true })
        .finalChatCompletion();
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      const got = final.choices[0].message.tool_calls ?? [];
      expect(got.map((c) => (c.type === 'function' ? { name: c.function.name, args: JSON.parse(c.function.arguments) as unknown } : null))).toEqual(calls);
      expect(new Set(got.map((c) => c.id)).size).toBe(calls.length);
    },
    maxTokens(text) {
      expect((JSON.parse(text) as Record<string, any>).choices[0].finish_reason).toBe('length');
    },
    textSoFar(out, deltas, translated) {
      const { chunks, done } = parseDataStream(out);
      expect(done).toBe(false);
      expect(chatText(chunks)).toBe(deltas.join(''));
      if (translated)
        expect(chunks.map((c) => (c.choices as { delta: unknown }[])[0].delta)).toEqual([
          { role: 'assistant', content: '' },
          ...deltas.map((d) => ({ content: d })),
        ]);
    },
  },
);

// Anthropic Messages: a message with the settled usage; a stream of message_start, one text block,
// message_delta with the usage, message_stop, which the official SDK accumulates.
const { messageStart, ev, textDelta, usage: messagesUsage } = anthropicEvents(REQUEST_ID, 'unused');
const ANTHROPIC_BASE = { max_tokens: 1024, messages: [{ role: 'user', content: 'Hi' }] };

describeTextReplies(
  'anthropic',
  {
    translator: (up) => chatTranslators.anthropic[up]!,
    req: anthropicReq(ANTHROPIC_BASE),
    streamReq: anthropicReq({ ...ANTHROPIC_BASE, stream: true }),
    readsStatus: [],
    readsErrorEventName: ['openai', 'anthropic', 'gemini'],
  },
  {
    whole(text, up, translated) {
      const f = upstreamReplies[up].text;
      const body = JSON.parse(text) as JsonObject;
      expect(body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: f.content }], stop_reason: 'end_turn' });
      expect(body.usage).toMatchObject({ input_tokens: f.usage.promptTokens, output_tokens: f.usage.completionTokens });
      if (!translated) return;
      expect(body).toEqual({
        id: `msg_${REQUEST_ID}`,
        type: 'message',
        role: 'assistant',
        model: MODEL_NAME[up],
        content: [{ type: 'text', text: f.content }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: messagesUsage(f.usage.promptTokens, f.usage.completionTokens),
      });
    },
    async stream(beforeEnd, end, up, translated) {
      const f = upstreamReplies[up].text;
      const out = beforeEnd + end;
      if (translated) {
        expect(parseClientSse(out)).toEqual([
          messageStart(MODEL_NAME[up]),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ...f.deltas.map((d) => textDelta(0, d)),
          ev('content_block_stop', { index: 0 }),
          ev('message_delta', {
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: messagesUsage(f.usage.promptTokens, f.usage.completionTokens),
          }),
          ev('message_stop', {}),
        ]);
      }
      const msg = await sdkFinalMessage(out, MODEL_NAME[up]);
      expect(msg.content).toEqual([{ type: 'text', text: f.content }]);
      expect(msg.stop_reason).toBe('end_turn');
      expect(msg.usage).toMatchObject({ output_tokens: f.usage.completionTokens });
      if (translated) expect(msg.usage).toMatchObject(messagesUsage(f.usage.promptTokens, f.usage.completionTokens));
    },
    toolCalls(text, calls) {
      const body = JSON.parse(text) as Record<string, any>;
      expect(body.stop_reason).toBe('tool_use');
      expect((body.content as Record<string, any>[]).filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, args: b.input }))).toEqual(calls);
    },
    async streamedToolCalls(out, calls, up) {
      const msg = await sdkFinalMessage(out, MODEL_NAME[up]);
      expect(msg.stop_reason).toBe('tool_use');
      const uses = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
      expect(uses.map((b) => ({ name: b.name, args: b.input }))).toEqual(calls);
      expect(new Set(uses.map((b) => b.id)).size).toBe(calls.length);
    },
    maxTokens(text) {
      expect((JSON.parse(text) as Record<string, any>).stop_reason).toBe('max_tokens');
    },
    textSoFar(out, deltas) {
      const events = parseClientSse(out);
      expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', ...deltas.map(() => 'content_block_delta')]);
      expect(events.slice(2).map((e) => (e.data as { delta: { text: string } }).delta.text)).toEqual(deltas);
    },
  },
);

// Gemini: a GenerateContentResponse with the text as a part, finishReason STOP and usageMetadata
// from the settlement; a stream of such responses (SSE framing), the finish in the last.
const partsText = (chunk: Record<string, any>): string =>
  ((chunk.candidates?.[0]?.content?.parts ?? []) as { text?: string; thought?: boolean }[])
    .filter((p) => p.thought !== true)
    .map((p) => p.text ?? '')
    .join('');
const geminiChunks = (out: string): Record<string, any>[] =>
  out
    .split(/\r?\n\r?\n/)
    .filter((b) => b !== '')
    .map((b) => {
      expect(b.startsWith('data: ')).toBe(true);
      return JSON.parse(b.slice(6)) as Record<string, any>;
    });

/** The function calls of Gemini responses (each sent whole), in order. */
const functionCalls = (chunks: Record<string, any>[]): ToolCall[] =>
  chunks.flatMap((c) =>
    ((c.candidates?.[0]?.content?.parts ?? []) as { functionCall?: { name: string; args: Record<string, unknown> } }[]).flatMap((p) =>
      p.functionCall ? [{ name: p.functionCall.name, args: p.functionCall.args }] : [],
    ),
  );

describeTextReplies(
  'gemini',
  {
    translator: (up) => geminiTranslators[up]({ framing: 'sse', includeThoughts: false }),
    req: anthropicReq({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    streamReq: anthropicReq({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    readsStatus: ['anthropic', 'gemini'],
    readsErrorEventName: ['openai', 'anthropic'],
  },
  {
    whole(text, up) {
      const f = upstreamReplies[up].text;
      const body = JSON.parse(text) as Record<string, any>;
      expect(partsText(body)).toBe(f.content);
      expect(body.candidates[0].finishReason).toBe('STOP');
      expect(body.usageMetadata).toMatchObject({ promptTokenCount: f.usage.promptTokens });
    },
    async stream(beforeEnd, end, up) {
      const f = upstreamReplies[up].text;
      const chunks = geminiChunks(beforeEnd + end);
      expect(chunks.map(partsText).join('')).toBe(f.content);
      expect(chunks.at(-1)!.candidates[0].finishReason).toBe('STOP');
      expect(chunks.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: f.usage.promptTokens });
      await Promise.resolve();
    },
    toolCalls(text, calls) {
      const body = JSON.parse(text) as Record<string, any>;
      expect(body.candidates[0].finishReason).toBe('STOP');
      expect(functionCalls([body])).toEqual(calls);
    },
    async streamedToolCalls(out, calls) {
      const chunks = geminiChunks(out);
      expect(chunks.at(-1)!.candidates[0].finishReason).toBe('STOP');
      expect(functionCalls(chunks)).toEqual(calls);
      await Promise.resolve();
    },
    maxTokens(text) {
      expect((JSON.parse(text) as Record<string, any>).candidates[0].finishReason).toBe('MAX_TOKENS');
    },
    textSoFar(out, deltas) {
      expect(geminiChunks(out).map(partsText).join('')).toBe(deltas.join(''));
    },
  },
);

// Responses: the OpenAI chat translators wrapped (translate/responses-chat.ts), so that a chat
// upstream's reply reaches a Responses client as a response object, or as its stream events ending
// with response.completed.
const responsesBody = { model: 'm', input: 'Hi' };
const responsesTurn = (): ResponsesTurn => {
  const plan = chatPlanOf(responsesBody);
  return { body: responsesBody, chat: chatClientRequest(plan.chat, {}), conversation: plan.conversation, onFinish: () => undefined };
};
const responsesEvents = (out: string) => parseClientSse(out).map((e) => e.data as Record<string, any>);
const outputText = (events: Record<string, any>[]) =>
  events
    .filter((e) => e.type === 'response.output_text.delta')
    .map((e) => e.delta as string)
    .join('');

const functionCallItems = (output: Record<string, any>[]): ToolCall[] =>
  output.filter((i) => i.type === 'function_call').map((i) => ({ name: i.name as string, args: JSON.parse(i.arguments as string) as Record<string, unknown> }));

describeTextReplies(
  'responses',
  {
    translator: (up) => responsesTranslator(chatTranslators.openai[up]!, responsesTurn(), up),
    req: openaiReq(responsesBody),
    streamReq: openaiReq({ ...responsesBody, stream: true }),
    readsStatus: ['anthropic', 'gemini'],
    readsErrorEventName: ['anthropic'],
  },
  {
    whole(text, up) {
      const f = upstreamReplies[up].text;
      const body = JSON.parse(text) as Record<string, any>;
      expect(body).toMatchObject({ object: 'response', status: 'completed' });
      const message = (body.output as Record<string, any>[]).find((i) => i.type === 'message');
      expect(message?.content).toMatchObject([{ type: 'output_text', text: f.content }]);
      expect(body.usage).toMatchObject({ input_tokens: f.usage.promptTokens, output_tokens: f.usage.completionTokens });
    },
    async stream(beforeEnd, end, up) {
      const f = upstreamReplies[up].text;
      const events = responsesEvents(beforeEnd + end);
      expect(outputText(events)).toBe(f.content);
      expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed' } });
      await Promise.resolve();
    },
    toolCalls(text, calls) {
      const body = JSON.parse(text) as Record<string, any>;
      expect(body.status).toBe('completed');
      expect(functionCallItems(body.output as Record<string, any>[])).toEqual(calls);
    },
    async streamedToolCalls(out, calls) {
      const last = responsesEvents(out).at(-1)!;
      expect(last).toMatchObject({ type: 'response.completed', response: { status: 'completed' } });
      expect(functionCallItems(last.response.output as Record<string, any>[])).toEqual(calls);
      await Promise.resolve();
    },
    maxTokens(text) {
      expect(JSON.parse(text)).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    },
    textSoFar(out, deltas) {
      const events = responsesEvents(out);
      expect(outputText(events)).toBe(deltas.join(''));
      expect(events.some((e) => e.type === 'response.completed')).toBe(false);
    },
  },
);

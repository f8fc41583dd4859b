// The Responses API over Chat Completions: the request mapping, the Response object of a whole
// reply, and the Responses stream events (exact order and sequence numbers) of a translated chat
// stream, read back by the official SDK.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '@/lib/errors';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { openaiToAnthropic } from '@/lib/gateway/translate/openai-anthropic';
import {
  chatClientRequest,
  chatPlanOf,
  responsesStreamError,
  responsesTranslator,
  type FinishedResponse,
  type ResponsesTurn,
} from '@/lib/gateway/translate/responses-chat';
import type { CallInfo, Settlement, Translator } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { refusalOf, sdkAnswering } from '../support/openai-client-harness';
import { fixtureText, sseEvents } from '../support/sse-fixture';

const model = modelInfo({ name: 'gpt-4o-mini' });
const call = (over: Partial<CallInfo> = {}): CallInfo => ({ model, stream: false, requestId: 'req_abc123', created: 1764120500, ...over });
const settled: Settlement = {
  usage: { promptTokens: 20, completionTokens: 12, cacheReadTokens: 5, cacheWriteTokens: 0, reasoningTokens: 0 },
  costUsd: '0.0000123',
  costCny: '0.0000876',
  channel: 'openai-1',
  latencyMs: 42,
};

function turnFor(body: Record<string, unknown>, history: Record<string, unknown>[] = []) {
  const plan = chatPlanOf(body, history);
  const finished: FinishedResponse[] = [];
  const turn: ResponsesTurn = { body, chat: chatClientRequest(plan.chat, {}), conversation: plan.conversation, onFinish: (f) => finished.push(f) };
  return { plan, turn, finished };
}

const refusal = (body: Record<string, unknown>): GatewayError => refusalOf(() => chatPlanOf(body));

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  strict: true,
};

describe('Responses -> Chat Completions: request', () => {
  it('maps a string input, instructions and the sampling and output fields', () => {
    const { plan } = turnFor({
      model: 'gpt-4o-mini',
      input: 'Hi',
      instructions: 'Be brief.',
      max_output_tokens: 300,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      store: true,
      metadata: { a: 'b' },
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      stream: true,
    });
    expect(plan.chat).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      max_completion_tokens: 300,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      reasoning_effort: 'low',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      stream: true,
    });
    // The instructions are not part of the stored conversation (a next turn does not inherit them).
    expect(plan.conversation).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('maps items: messages with text and image parts, function calls joined into one assistant turn, their outputs', () => {
    const { plan } = turnFor({
      model: 'm',
      input: [
        { role: 'developer', content: 'Use tools.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather?' },
            { type: 'input_image', image_url: 'https://x.test/a.png', detail: 'low' },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
        { type: 'function_call_output', call_id: 'call_2', output: '{"temp":25}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ],
      tools: [weather],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      text: { format: { type: 'json_object' } },
    });
    expect(plan.chat.messages).toEqual([
      { role: 'developer', content: 'Use tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: '{"temp":25}' },
    ]);
    expect(plan.chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: weather.parameters, strict: true } },
    ]);
    expect(plan.chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(plan.chat.parallel_tool_calls).toBe(false);
    expect(plan.chat.response_format).toEqual({ type: 'json_object' });
  });

  it('puts the stored conversation of previous_response_id before the new input, after the instructions; the turn stores its own input only', () => {
    const history = [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
    ];
    const { plan } = turnFor({ model: 'm', input: 'What is my name?', instructions: 'Be kind.' }, history);
    expect(plan.chat.messages).toEqual([{ role: 'system', content: 'Be kind.' }, ...history, { role: 'user', content: 'What is my name?' }]);
    // Earlier turns are stored with their own responses (issue 37: a chain stored them again per link).
    expect(plan.conversation).toEqual([{ role: 'user', content: 'What is my name?' }]);
  });

  it.each(['web_search', 'web_search_preview', 'file_search', 'computer_use_preview', 'mcp', 'code_interpreter', 'image_generation'])(
    'leaves a %s tool out of the chat request and names it as dropped (400 only when tool_choice forces it)',
    (type) => {
      const { plan } = turnFor({ model: 'm', input: 'Hi', tools: [weather, { type }] });
      expect((plan.chat.tools as unknown[]).length).toBe(1);
      expect(plan.dropped).toEqual([type]);
      expect(plan.forcedHosted).toBeUndefined();
      const forced = turnFor({ model: 'm', input: 'Hi', tools: [weather, { type }], tool_choice: { type } }).plan.forcedHosted;
      expect(forced?.status).toBe(400);
      expect(forced?.param).toBe('tool_choice');
      expect(forced?.message).toContain(type);
    },
  );

  it('refuses an unknown tool type with a 400 naming it', () => {
    const err = refusal({ model: 'm', input: 'Hi', tools: [weather, { type: 'teleport' }] });
    expect(err.param).toBe('tools[1].type');
    expect(err.message).toContain('"teleport"');
  });

  it('refuses unknown input items and uploaded file ids with a 400 naming the item', () => {
    expect(refusal({ model: 'm', input: [{ type: 'web_search_call', id: 'ws_1' }] }).param).toBe('input[0].type');
    expect(refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }).param).toBe(
      'input[0].content[0].image_url',
    );
    expect(refusal({ model: 'm', input: [] }).param).toBe('input');
  });
});

const chatReply = (message: Record<string, unknown>, finish: string) =>
  JSON.stringify({
    id: 'chatcmpl-up1',
    object: 'chat.completion',
    created: 1764120500,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason: finish }],
    usage: { prompt_tokens: 25, completion_tokens: 12, total_tokens: 37, prompt_tokens_details: { cached_tokens: 5 } },
  });

describe('Chat Completions -> Responses: a whole reply', () => {
  it('writes text and a tool call of one reply as a message item and a function_call item, with usage and cost', async () => {
    const { turn, finished } = turnFor({ model: 'gpt-4o-mini', input: 'Weather in Paris?', tools: [weather], metadata: { k: 'v' } });
    const t = responsesTranslator(openaiToOpenai, turn);
    const reply = t.response(
      chatReply(
        { content: 'Let me check.', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        'tool_calls',
      ),
      call(),
    );
    const text = reply.render(settled);
    expect(text.endsWith(',"service":{"channel":"openai-1","latency_ms":42,"cost_usd":0.0000123}}')).toBe(true);
    const response = JSON.parse(text);
    expect(response).toMatchObject({
      id: 'resp_abc123',
      object: 'response',
      created_at: 1764120500,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      model: 'gpt-4o-mini',
      parallel_tool_calls: true,
      metadata: { k: 'v' },
      tool_choice: 'auto',
      temperature: 1,
      top_p: 1,
      tools: [weather],
      output: [
        {
          id: 'msg_abc123',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
        },
        { id: 'fc_abc123_0', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      usage: {
        input_tokens: 25,
        input_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
        output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 37,
      },
    });
    expect(finished).toHaveLength(1);
    expect(finished[0].id).toBe('resp_abc123');
    expect(finished[0].conversation.at(-1)).toEqual({
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
    // The official SDK reads it, output_text included.
    const sdk = await sdkAnswering(text, 'application/json').responses.create({ model: 'gpt-4o-mini', input: 'x' });
    expect(sdk.output_text).toBe('Let me check.');
  });

  it('is incomplete with reason max_output_tokens when the reply was cut by the output cap', () => {
    const { turn } = turnFor({ model: 'gpt-4o-mini', input: 'Hi', max_output_tokens: 5 });
    const response = JSON.parse(
      responsesTranslator(openaiToOpenai, turn)
        .response(chatReply({ content: 'Hello th' }, 'length'), call())
        .render(settled),
    );
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.max_output_tokens).toBe(5);
    expect(response.output[0].status).toBe('incomplete');
  });
});

/** Chat chunks of one reply, as an OpenAI upstream streams them. */
function chatStream(deltas: [Record<string, unknown>, string | null][]): string {
  const head = { id: 'chatcmpl-up2', object: 'chat.completion.chunk', created: 1764120500, model: 'gpt-4o-mini' };
  let out = '';
  for (const [delta, finish] of deltas)
    out += `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  out += `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 25, completion_tokens: 12, total_tokens: 37 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

function runStream(
  inner: Translator,
  upstream: string,
  body: Record<string, unknown> = { model: 'gpt-4o-mini', input: 'Weather?', tools: [weather], stream: true },
) {
  const { turn, finished } = turnFor(body);
  const st = responsesTranslator(inner, turn).stream(call({ stream: true }), turn.chat);
  let out = '';
  for (const ev of sseEvents(upstream)) out += st.push(ev);
  expect(st.finished).toBe(true);
  out += st.end(settled);
  return { out, finished };
}

function events(out: string): Record<string, any>[] {
  return out
    .split('\n\n')
    .filter((b) => b !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine.slice(6));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

describe('Chat Completions -> Responses: a stream', () => {
  it('sends text and a tool call of one reply as two items, every event in the SDK order with sequence numbers', async () => {
    const upstream = chatStream([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Let me ' }, null],
      [{ content: 'check.' }, null],
      [{ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null],
      [{}, 'tool_calls'],
    ]);
    const { out, finished } = runStream(openaiToOpenai, upstream);
    const evs = events(out);
    expect(evs.map((e) => [e.sequence_number, e.type])).toEqual([
      [0, 'response.created'],
      [1, 'response.in_progress'],
      [2, 'response.output_item.added'],
      [3, 'response.content_part.added'],
      [4, 'response.output_text.delta'],
      [5, 'response.output_text.delta'],
      [6, 'response.output_text.done'],
      [7, 'response.content_part.done'],
      [8, 'response.output_item.done'],
      [9, 'response.output_item.added'],
      [10, 'response.function_call_arguments.delta'],
      [11, 'response.function_call_arguments.delta'],
      [12, 'response.function_call_arguments.done'],
      [13, 'response.output_item.done'],
      [14, 'response.completed'],
    ]);
    expect(evs[0].response).toMatchObject({ id: 'resp_abc123', status: 'in_progress', output: [] });
    expect(evs[2]).toMatchObject({ output_index: 0, item: { id: 'msg_abc123', type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    expect(evs[4]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: 'msg_abc123',
      output_index: 0,
      content_index: 0,
      delta: 'Let me ',
      logprobs: [],
    });
    expect(evs[6]).toMatchObject({ item_id: 'msg_abc123', text: 'Let me check.' });
    expect(evs[9]).toMatchObject({
      output_index: 1,
      item: { id: 'fc_abc123_0', type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '', status: 'in_progress' },
    });
    expect(evs[12]).toMatchObject({ item_id: 'fc_abc123_0', output_index: 1, arguments: '{"city":"Paris"}' });
    const response = evs[14].response;
    expect(response.status).toBe('completed');
    expect(response.output).toEqual([
      {
        id: 'msg_abc123',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
      { id: 'fc_abc123_0', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(response.usage.total_tokens).toBe(37);
    expect(response.service.cost_usd).toBe(0.0000123);
    expect(JSON.parse(finished[0].text)).toEqual(response);

    // The official SDK assembles the same response from the events.
    const stream = sdkAnswering(out, 'text/event-stream').responses.stream({ model: 'gpt-4o-mini', input: 'x' });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Let me check.');
    expect(final.output[1]).toMatchObject({ type: 'function_call', call_id: 'call_9', arguments: '{"city":"Paris"}' });
  });

  it('translates an Anthropic stream of text and two tool calls (every call kept, each its own item)', async () => {
    const { out } = runStream(openaiToAnthropic, fixtureText('anthropic/tools.sse'));
    const evs = events(out);
    expect(evs.map((e) => e.sequence_number)).toEqual(evs.map((_, i) => i));
    const final = evs.at(-1)!;
    expect(final.type).toBe('response.completed');
    expect(final.response.output.map((o: { type: string }) => o.type)).toEqual(['message', 'function_call', 'function_call']);
    for (const item of final.response.output.slice(1)) expect(() => JSON.parse(item.arguments)).not.toThrow();
    const added = evs.filter((e) => e.type === 'response.output_item.added').map((e) => e.output_index);
    expect(added).toEqual([0, 1, 2]);
    const sdk = await sdkAnswering(out, 'text/event-stream').responses.stream({ model: 'gpt-4o-mini', input: 'x' }).finalResponse();
    expect(sdk.output).toHaveLength(3);
  });

  it('sends thinking as a reasoning item (summary events) before the message', () => {
    const { out } = runStream(
      openaiToOpenai,
      chatStream([
        [{ role: 'assistant', reasoning_content: 'Think' }, null],
        [{ reasoning_content: 'ing.' }, null],
        [{ content: 'Done.' }, null],
        [{}, 'stop'],
      ]),
      { model: 'gpt-4o-mini', input: 'Hi', stream: true },
    );
    const evs = events(out);
    expect(evs.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(evs.at(-1)!.response.output).toEqual([
      { id: 'rs_abc123', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking.' }] },
      {
        id: 'msg_abc123',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('gives text after a tool call an item (and id) of its own', () => {
    const { out } = runStream(
      openaiToOpenai,
      chatStream([
        [{ role: 'assistant', content: 'A' }, null],
        [{ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }, null],
        [{ content: 'B' }, null],
        [{}, 'tool_calls'],
      ]),
    );
    const output = events(out).at(-1)!.response.output as { id: string; type: string }[];
    expect(output.map((o) => [o.type, o.id])).toEqual([
      ['message', 'msg_abc123'],
      ['function_call', 'fc_abc123_0'],
      ['message', 'msg_abc123_1'],
    ]);
  });

  it('numbers an error event after the last event sent', () => {
    const { turn } = turnFor({ model: 'gpt-4o-mini', input: 'Hi', stream: true });
    const st = responsesTranslator(openaiToOpenai, turn).stream(call({ stream: true }), turn.chat);
    const sent = events(
      sseEvents(chatStream([[{ role: 'assistant', content: 'Hel' }, null]]))
        .map((ev) => st.push(ev))
        .join(''),
    );
    const error = responsesStreamError(turn, JSON.stringify({ error: { message: 'broke', type: 'upstream_error', param: null, code: 'upstream_error' } }));
    expect(error.startsWith('event: error\n')).toBe(true);
    expect(events(error)[0]).toEqual({
      type: 'error',
      sequence_number: sent.length,
      error: { message: 'broke', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
  });

  it('ends a reply cut by the output cap with response.incomplete', () => {
    const { out } = runStream(
      openaiToOpenai,
      chatStream([
        [{ role: 'assistant', content: 'Hel' }, null],
        [{}, 'length'],
      ]),
      { model: 'gpt-4o-mini', input: 'Hi', stream: true },
    );
    const last = events(out).at(-1)!;
    expect(last.type).toBe('response.incomplete');
    expect(last.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('sends nothing before the upstream sends content (a failing upstream can still be replaced)', () => {
    const { turn } = turnFor({ model: 'gpt-4o-mini', input: 'Hi', stream: true });
    const st = responsesTranslator(openaiToOpenai, turn).stream(call({ stream: true }), turn.chat);
    const head = { id: 'chatcmpl-up3', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini' };
    expect(
      st.push(
        sseEvents(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] })}\n\n`)[0],
      ),
    ).toBe('');
  });
});

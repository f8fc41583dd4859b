// What Codex CLI needs of the Responses translation: namespace, custom (free-form) and local_shell
// tools over chat functions and back as the client's own item kinds, whole and streamed; the
// encrypted reasoning that brings a Claude model's signed thinking and Gemini's thought signatures
// through a stateless conversation (and a blob the gateway did not seal is ignored).
import { describe, expect, it } from 'vitest';
import { openaiToAnthropic } from '@/lib/gateway/translate/openai-anthropic';
import { openaiToGemini } from '@/lib/gateway/translate/openai-gemini';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { openReasoning, sealReasoning } from '@/lib/gateway/translate/reasoning-seal';
import { chatClientRequest, chatPlanOf, responsesTranslator, type FinishedResponse, type ResponsesTurn } from '@/lib/gateway/translate/responses-chat';
import { flatName } from '@/lib/gateway/translate/responses-tools';
import { nativeBody } from '@/lib/gateway/translate/responses-native';
import type { CallInfo, Settlement, Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { sseEvents } from '../support/sse-fixture';

type Json = Record<string, any>;
const call = (over: Partial<CallInfo> = {}): CallInfo => ({
  model: modelInfo({ name: 'm' }),
  stream: false,
  requestId: 'req_abc',
  created: 1764120500,
  ...over,
});
const settled: Settlement = {
  usage: { promptTokens: 20, completionTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  costUsd: '0.0001',
  costCny: '0.0007',
  channel: 'c',
  latencyMs: 1,
};

const spawn = { type: 'function', name: 'spawn_agent', description: 'Spawn', parameters: { type: 'object', properties: { task: { type: 'string' } } } };
const TOOLS = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [spawn] },
  { type: 'custom', name: 'apply_patch', description: 'Patch files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } },
  { type: 'local_shell' },
  { type: 'web_search', external_web_access: false },
];

function turnFor(body: Json, protocol: UpstreamProtocol, inner: Translator) {
  const plan = chatPlanOf(body);
  const finished: FinishedResponse[] = [];
  const turn: ResponsesTurn = {
    body,
    chat: chatClientRequest(plan.chat, {}),
    conversation: plan.conversation,
    tools: plan.tools,
    dropped: plan.dropped,
    onFinish: (f) => finished.push(f),
  };
  return { plan, turn, finished, t: responsesTranslator(inner, turn, protocol) };
}

/** A chat.completion from an OpenAI upstream with these tool calls. */
const completion = (calls: { name: string; arguments: string; extra?: Json }[]) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: { role: 'assistant', content: null, tool_calls: calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c, ...c.extra })) },
      },
    ],
    usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 },
  });

/** The same calls as a chat stream. */
const chunkStream = (calls: { name: string; arguments: string }[]) =>
  [
    ...calls.flatMap((c, i) => [
      { tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] },
      { tool_calls: [{ index: i, function: { arguments: c.arguments.slice(0, 5) } }] },
      { tool_calls: [{ index: i, function: { arguments: c.arguments.slice(5) } }] },
    ]),
  ]
    .map(
      (delta) =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
    )
    .join('') +
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\ndata: [DONE]\n\n`;

function streamEvents(t: Translator, upstream: string, c = call({ stream: true })): Json[] {
  const st = t.stream(c, chatClientRequest({}, {}));
  let out = '';
  for (const ev of sseEvents(upstream)) out += st.push(ev);
  out += st.end(settled);
  return out
    .split('\n\n')
    .filter(Boolean)
    .map(
      (b) =>
        JSON.parse(
          b
            .split('\n')
            .find((l) => l.startsWith('data:'))!
            .slice(5),
        ) as Json,
    );
}

describe('Codex tools over chat functions', () => {
  it('flattens namespace functions, makes custom and local_shell tools functions, and leaves hosted tools out', () => {
    const { plan } = turnFor({ model: 'm', input: 'Hi', tools: TOOLS }, 'openai', openaiToOpenai);
    const fns = (plan.chat.tools as Json[]).map((t) => t.function);
    expect(fns.map((f) => f.name)).toEqual(['exec_command', 'multi_agent_v1__spawn_agent', 'apply_patch', 'local_shell']);
    expect(fns[1].description).toBe('(multi_agent_v1: Sub-agents.)\n\nSpawn');
    expect(fns[2].parameters).toMatchObject({ type: 'object', required: ['input'], properties: { input: { type: 'string' } } });
    expect(fns[2].parameters.properties.input.description).toContain('start: "*** Begin Patch"');
    expect(plan.dropped).toEqual(['web_search']);
  });

  it('hashes a flattened name that no upstream would accept, keeping it within 64 portable characters', () => {
    const long = flatName('n'.repeat(40), 'f'.repeat(40));
    expect(long).toMatch(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/);
    expect(flatName('mcp.server', 'tool')).toMatch(/^mcp_server__tool_[0-9a-f]{10}$/);
    expect(flatName('n'.repeat(40), 'g'.repeat(40))).not.toBe(long);
  });

  it('answers each call as the item kind the client declared (whole reply)', () => {
    const { t } = turnFor({ model: 'm', input: 'Hi', tools: TOOLS }, 'openai', openaiToOpenai);
    const body = JSON.parse(
      t
        .response(
          completion([
            { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"x"}' },
            { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n"}' },
            { name: 'local_shell', arguments: '{"command":["ls","-la"],"working_directory":"/tmp"}' },
          ]),
          call(),
        )
        .render(settled),
    ) as Json;
    expect(body.output).toEqual([
      {
        id: 'fc_abc_0',
        type: 'function_call',
        status: 'completed',
        call_id: 'call_0',
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"task":"x"}',
      },
      { id: 'ctc_abc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n' },
      {
        id: 'lsh_abc_2',
        type: 'local_shell_call',
        status: 'completed',
        call_id: 'call_2',
        action: { type: 'exec', command: ['ls', '-la'], timeout_ms: null, working_directory: '/tmp', env: {}, user: null },
      },
    ]);
  });

  it('streams them: function_call argument deltas under the client name, custom input whole when it closes', () => {
    const { t } = turnFor({ model: 'm', input: 'Hi', tools: TOOLS, stream: true }, 'openai', openaiToOpenai);
    const events = streamEvents(
      t,
      chunkStream([
        { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"x"}' },
        { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' },
      ]),
    );
    const types = events.map((e) => e.type);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[2].item).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1' });
    expect(events[5].item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '', status: 'in_progress' });
    expect(events[6]).toMatchObject({ name: 'spawn_agent', arguments: '{"task":"x"}' });
    expect(events[9]).toMatchObject({ item_id: 'ctc_abc_1', input: '*** Begin Patch' });
    expect(events.at(-1)!.response.output.map((o: Json) => o.type)).toEqual(['function_call', 'custom_tool_call']);
  });

  it('reads replayed calls and outputs of every kind back into one assistant turn and its tool results', () => {
    const { plan } = turnFor(
      {
        model: 'm',
        tools: TOOLS,
        input: [
          { role: 'developer', content: [{ type: 'input_text', text: 'Rules.' }] },
          { role: 'user', content: 'Go' },
          { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' },
          { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: 'PATCH' },
          { type: 'local_shell_call', call_id: 'c3', status: 'completed', action: { type: 'exec', command: ['ls'] } },
          { type: 'function_call_output', call_id: 'c1', output: 'spawned' },
          { type: 'custom_tool_call_output', call_id: 'c2', output: 'patched' },
          { type: 'local_shell_call_output', id: 'c3', output: 'a.txt' },
        ],
      },
      'openai',
      openaiToOpenai,
    );
    expect(plan.chat.messages).toEqual([
      { role: 'developer', content: 'Rules.' },
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"PATCH"}' } },
          { id: 'c3', type: 'function', function: { name: 'local_shell', arguments: '{"command":["ls"]}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'spawned' },
      { role: 'tool', tool_call_id: 'c2', content: 'patched' },
      { role: 'tool', tool_call_id: 'c3', content: 'a.txt' },
    ]);
  });

  it('maps a tool_choice naming a namespaced or custom tool to the chat function', () => {
    const choice = (tool_choice: unknown) => turnFor({ model: 'm', input: 'Hi', tools: TOOLS, tool_choice }, 'openai', openaiToOpenai).plan.chat.tool_choice;
    expect(choice({ type: 'function', namespace: 'multi_agent_v1', name: 'spawn_agent' })).toEqual({
      type: 'function',
      function: { name: 'multi_agent_v1__spawn_agent' },
    });
    expect(choice({ type: 'custom', name: 'apply_patch' })).toEqual({ type: 'function', function: { name: 'apply_patch' } });
  });
});

// An Anthropic reply with signed thinking and a tool call.
const SIGNATURE = 'EqQBCgIYAhIMsignedByClaude';
const anthropicReply = JSON.stringify({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'I should list files.', signature: SIGNATURE },
    { type: 'tool_use', id: 'toolu_1', name: 'exec_command', input: { cmd: 'ls' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 20, output_tokens: 12 },
});

describe('encrypted reasoning across a stateless conversation', () => {
  const include = ['reasoning.encrypted_content'];

  it("carries a Claude model's signed thinking to the next turn, where Anthropic gets it back before the tool use", () => {
    const first = turnFor(
      { model: 'm', input: 'List files', tools: TOOLS.slice(0, 1), include, reasoning: { effort: 'high' } },
      'anthropic',
      openaiToAnthropic,
    );
    const body = JSON.parse(first.t.response(anthropicReply, call()).render(settled)) as Json;
    const types = body.output.map((o: Json) => o.type);
    expect(types).toEqual(['reasoning', 'function_call', 'reasoning']);
    const sealed = body.output[2];
    expect(sealed.encrypted_content).toMatch(/^gwr1\./);
    // Opaque: neither the thinking nor the signature reads in the clear.
    expect(sealed.encrypted_content).not.toContain(SIGNATURE);
    expect(Buffer.from(sealed.encrypted_content.slice(5), 'base64url').toString('latin1')).not.toContain('signedByClaude');

    // Codex sends the whole output back with the call's result.
    const second = turnFor(
      {
        model: 'm',
        tools: TOOLS.slice(0, 1),
        include,
        reasoning: { effort: 'high' },
        input: [{ role: 'user', content: 'List files' }, ...body.output, { type: 'function_call_output', call_id: 'toolu_1', output: 'a.txt' }],
      },
      'anthropic',
      openaiToAnthropic,
    );
    const upstream = JSON.parse(String(second.t.request(second.turn.chat, call()).body)) as Json;
    expect(upstream.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should list files.', signature: SIGNATURE },
        { type: 'tool_use', id: 'toolu_1', name: 'exec_command', input: { cmd: 'ls' } },
      ],
    });
    // With its signed thinking back, the tool loop may think again.
    expect(upstream.thinking).toMatchObject({ type: 'enabled' });
    // Another protocol does not get Anthropic's blocks.
    const onOpenai = turnFor({ ...second.turn.body }, 'openai', openaiToOpenai);
    expect(JSON.stringify(JSON.parse(String(onOpenai.t.request(onOpenai.turn.chat, call()).body)))).not.toContain('thinking_blocks');
  });

  it("carries Gemini's thought signature on a call through the next turn", () => {
    const geminiReply = JSON.stringify({
      candidates: [
        {
          content: { role: 'model', parts: [{ functionCall: { name: 'exec_command', args: { cmd: 'ls' } }, thoughtSignature: 'R0VNSU5JU0lH' }] },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 12, totalTokenCount: 32 },
    });
    const first = turnFor({ model: 'm', input: 'List files', tools: TOOLS.slice(0, 1), include }, 'gemini', openaiToGemini);
    const body = JSON.parse(first.t.response(geminiReply, call()).render(settled)) as Json;
    const fc = body.output.find((o: Json) => o.type === 'function_call');
    expect(body.output.at(-1).encrypted_content).toMatch(/^gwr1\./);
    const second = turnFor(
      {
        model: 'm',
        tools: TOOLS.slice(0, 1),
        include,
        input: [{ role: 'user', content: 'List files' }, ...body.output, { type: 'function_call_output', call_id: fc.call_id, output: 'a.txt' }],
      },
      'gemini',
      openaiToGemini,
    );
    const upstream = JSON.parse(String(second.t.request(second.turn.chat, call()).body)) as Json;
    expect(upstream.contents[1].parts[0]).toMatchObject({ functionCall: { name: 'exec_command' }, thoughtSignature: 'R0VNSU5JU0lH' });
  });

  it('streams the sealed reasoning item after the calls, before response.completed', () => {
    const { t } = turnFor({ model: 'm', input: 'Hi', tools: TOOLS.slice(0, 1), include, stream: true }, 'anthropic', openaiToAnthropic);
    const sse = [
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 20, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'exec_command', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"cmd":"ls"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 12 } },
      { type: 'message_stop' },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('');
    const events = streamEvents(t, sse);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.completed');
    expect(last.response.output.map((o: Json) => o.type)).toEqual(['reasoning', 'function_call', 'reasoning']);
    const state = openReasoning(last.response.output[2].encrypted_content);
    expect(state?.thinking_blocks).toEqual([{ type: 'thinking', thinking: 'Hmm.', signature: SIGNATURE }]);
  });

  it('ignores a reasoning blob it did not seal: forged, altered or OpenAI’s', () => {
    const good = sealReasoning({ thinking_blocks: [{ type: 'thinking', thinking: 't', signature: 's' }] });
    expect(openReasoning(good)?.thinking_blocks).toHaveLength(1);
    const altered = good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const blob of [altered, 'gwr1.', 'gwr1.!!!', 'gAAAAABopenai-encrypted', 42]) expect(openReasoning(blob)).toBeUndefined();
    // Bound to the account it was written for.
    const mine = sealReasoning({ calls: { c: { x: 1 } } }, 'user-a');
    expect(openReasoning(mine, 'user-a')?.calls).toEqual({ c: { x: 1 } });
    expect(openReasoning(mine, 'user-b')).toBeUndefined();
    const { plan } = turnFor(
      {
        model: 'm',
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'reasoning', summary: [], encrypted_content: altered },
          { role: 'assistant', content: 'Hello' },
        ],
      },
      'anthropic',
      openaiToAnthropic,
    );
    expect(plan.chat.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  it('leaves its sealed reasoning out of a request passed to a native channel, and the bytes untouched otherwise', () => {
    const sealed = { type: 'reasoning', summary: [], encrypted_content: sealReasoning({ calls: { c1: { x: 1 } } }) };
    const openai = { type: 'reasoning', summary: [], encrypted_content: 'gAAAAopenai' };
    const json = { model: 'a', input: [{ role: 'user', content: 'Hi' }, sealed, openai] };
    const text = JSON.stringify(json);
    const out = JSON.parse(String(nativeBody({ raw: Buffer.from(text), text, json, verbatim: true }, 'b'))) as Json;
    expect(out).toEqual({ model: 'b', input: [{ role: 'user', content: 'Hi' }, openai] });
    const plain = '{"model": "b", "input": "Hi"}';
    expect(nativeBody({ raw: Buffer.from(plain), text: plain, json: JSON.parse(plain) as Json, verbatim: true }, 'b').toString()).toBe(plain);
  });
});

// A Responses request passed to a native Responses channel: the client's bytes go upstream (only
// `model` changes), the reply and the stream events come back as they came, usage is read from the
// Response, the terminal event is held until the cost is known, and the response is stored.
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError } from '@/lib/config';
import { chatClientRequest, type FinishedResponse, type ResponsesTurn } from '@/lib/gateway/translate/responses-chat';
import { nativeResponsesTranslator } from '@/lib/gateway/translate/responses-native';
import { responsesUsage } from '@/lib/gateway/translate/usage';
import type { CallInfo, ClientRequest, Settlement } from '@/lib/gateway/translate/types';
import { modelInfo } from '../support/model-info';
import { testConfig } from '../support/gateway';

const settled: Settlement = {
  usage: { promptTokens: 15, completionTokens: 7, cacheReadTokens: 5, cacheWriteTokens: 0, reasoningTokens: 2 },
  costUsd: '0.0000123',
  costCny: '0.0000876',
  channel: 'native-1',
  latencyMs: 42,
};
const call = (name: string, stream = false): CallInfo => ({ model: modelInfo({ name }), stream, requestId: 'req_abc', created: 1764120500 });

function setup(raw: string) {
  const json = JSON.parse(raw) as Record<string, unknown>;
  const client: ClientRequest = { body: { raw: Buffer.from(raw), text: raw, json, verbatim: true }, headers: {} };
  const finished: FinishedResponse[] = [];
  const turn: ResponsesTurn = { body: json, chat: chatClientRequest({}, {}), conversation: [], onFinish: (f) => finished.push(f) };
  return { client, finished, t: nativeResponsesTranslator(turn), turn };
}

const USAGE = {
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 5 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 2 },
  total_tokens: 27,
};
const RESPONSE = {
  id: 'resp_up1',
  object: 'response',
  status: 'completed',
  output: [{ id: 'msg_up1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] }],
  usage: USAGE,
};

describe('native Responses translator', () => {
  it('sends the client bytes, only the model changing on fallback, to the responses operation', () => {
    const raw = '{ "model":"m1",  "input": "Hi", "tools": [{"type":"web_search"}] }';
    const { client, t } = setup(raw);
    const same = t.request(client, call('m1'));
    expect(same.operation).toBe('responses');
    expect(String(same.body)).toBe(raw);
    expect(JSON.parse(String(t.request(client, call('m2')).body))).toEqual({ model: 'm2', input: 'Hi', tools: [{ type: 'web_search' }] });
  });

  it('reads usage in billing terms (cached tokens apart)', () => {
    expect(responsesUsage(USAGE)).toEqual({
      promptTokens: 15,
      completionTokens: 7,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
      reasoningTokens: 2,
      completionFinal: true,
    });
    expect(responsesUsage(null)).toBeNull();
  });

  it('relays a whole Response with the service member spliced in, and stores it under the upstream id', () => {
    const { t, finished } = setup('{"model":"m1","input":"Hi"}');
    const text = JSON.stringify(RESPONSE);
    const reply = t.response(text, call('m1'));
    expect(reply.usage?.promptTokens).toBe(15);
    const body = reply.render(settled);
    expect(body.startsWith(text.slice(0, -1))).toBe(true);
    expect(JSON.parse(body).service).toMatchObject({ channel: 'native-1' });
    expect(finished[0].id).toBe('resp_up1');
    expect(finished[0].conversation).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
    expect(() => t.response('{"choices":[]}', call('m1'))).toThrow();
  });

  it('relays stream events as they came and holds the terminal event until the cost is known', () => {
    const { t, finished, turn, client } = setup('{"model":"m1","input":"Hi","stream":true}');
    const st = t.stream(call('m1', true), client);
    const ev = (type: string, payload: Record<string, unknown>, seq: number) => {
      const data = JSON.stringify({ type, sequence_number: seq, ...payload });
      return { event: type, data, raw: `event: ${type}\ndata: ${data}\n\n` };
    };
    const created = ev('response.created', { response: { ...RESPONSE, status: 'in_progress', output: [], usage: null } }, 0);
    expect(st.push(created)).toBe(created.raw);
    const delta = ev('response.output_text.delta', { item_id: 'msg_up1', output_index: 0, content_index: 0, delta: 'Hello' }, 1);
    expect(st.push(delta)).toBe(delta.raw);
    expect(st.completion).toBe('Hello');
    expect(st.push(ev('response.completed', { response: RESPONSE }, 2))).toBe('');
    expect(st.finished).toBe(true);
    expect(st.usage?.cacheReadTokens).toBe(5);
    expect(turn.sequence).toBe(3);
    const tail = st.end(settled);
    expect(tail.startsWith('event: response.completed\ndata: ')).toBe(true);
    const data = JSON.parse(tail.split('\n')[1].slice(6));
    expect(data).toMatchObject({ type: 'response.completed', sequence_number: 2, response: { id: 'resp_up1', service: { channel: 'native-1' } } });
    expect(finished[0].id).toBe('resp_up1');
    expect(() => st.push(ev('error', { error: { message: 'boom' } }, 3))).toThrow();
  });

  it('the channel flag is for openai channels only', () => {
    const cfg = testConfig({ openaiUrls: ['http://127.0.0.1:1'], anthropicUrls: ['http://127.0.0.1:2'] });
    (cfg.channels as Record<string, unknown>[])[0].responses = true;
    expect(buildConfig(cfg, 'test').channels[0].responses).toBe(true);
    (cfg.channels as Record<string, unknown>[])[1].responses = true;
    expect(() => buildConfig(cfg, 'test')).toThrow(ConfigError);
  });
});

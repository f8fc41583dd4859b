// The robustness cases every OpenAI chat client -> upstream translator must take: bad client bodies
// refused with a 400, odd upstream stream events, whole replies and error bodies taken without a crash.
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '@/lib/errors';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import type { CallInfo, ClientRequest, Settlement, Translator } from '@/lib/gateway/translate/types';
import { modelInfo } from './model-info';

export interface OpenAiChatHarness {
  translator: Translator;
  call: (over?: Partial<CallInfo>) => CallInfo;
  clientReq: (json: Record<string, unknown>) => ClientRequest;
  /** The GatewayError the translator's request mapping throws for `json`. */
  refusal: (json: Record<string, unknown>) => GatewayError;
  settled: () => Settlement;
}

const hi = [{ role: 'user', content: 'Hi' }];

export function describeOpenAiChatRobustness(name: string, { translator, call, clientReq, refusal, settled }: OpenAiChatHarness): void {
  describe(name, () => {
    const badBodies: Record<string, unknown>[] = [
      { messages: [{ role: 'user', content: 5 }] },
      { messages: [{ role: 'user', content: [null] }] },
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: null }] }] },
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,notbase64' } }] }] },
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'hello' } }] }] },
      { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, ...hi] },
      { messages: [...hi, { role: 'assistant', tool_calls: 'x' }] },
      { messages: [...hi, { role: 'assistant', tool_calls: [{ id: 'a', function: { name: 'f', arguments: '[1]' } }] }] },
      { messages: [...hi, { role: 'assistant', tool_calls: [{ function: { name: 'f', arguments: '{}' } }] }] },
      { messages: [...hi, { role: 'tool', content: 'x' }] },
      { messages: [{ role: 'function', name: 'f', content: 'x' }] },
      { messages: [] },
      { messages: 'hi' },
      { messages: hi, tools: 'x' },
      { messages: hi, tools: [null] },
      { messages: hi, tools: [{ type: 'function', function: { name: '' } }] },
      { messages: hi, tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] },
      { messages: hi, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 5 },
      { messages: hi, stop: 5 },
      { messages: hi, stop: [1] },
      { messages: hi, response_format: 'json' },
      { messages: hi, response_format: { type: 'xml' } },
      { messages: hi, max_tokens: -1 },
      { messages: hi, max_completion_tokens: 1.5 },
      { messages: hi, reasoning_effort: 3 },
    ];

    it.each(badBodies.map((b) => [JSON.stringify(b), b]))('answers %s with a 400, never a crash', (_label, body) => {
      const err = refusal(body as Record<string, unknown>);
      expect(err.status).toBe(400);
      expect(err.param).toBeTruthy();
    });

    const oddEvents = [
      'null',
      '[]',
      '7',
      '"x"',
      '{}',
      '{"type":null}',
      '{"candidates":null}',
      '{"candidates":[null,{"content":null}]}',
      '{"candidates":[{"content":{"parts":[null,{"text":5},{"functionCall":null},{"functionCall":{"name":5}}]}}]}',
      '{"type":"message_start","message":null}',
      '{"type":"content_block_start","content_block":null}',
      '{"type":"content_block_delta","delta":null}',
      '{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{"}}',
      '{"type":"message_delta","delta":null,"usage":{"output_tokens":-5}}',
      '{"usageMetadata":{"promptTokenCount":"9"}}',
      '{"type":"error","error":null}',
      '{"error":"boom"}',
    ];

    it.each(oddEvents)('takes the odd stream event %s without crashing (client bytes or an UpstreamFailure)', (data) => {
      const st = translator.stream(call({ stream: true }), clientReq({ messages: hi, stream: true }));
      try {
        expect(typeof st.push({ event: 'message', data, raw: '' })).toBe('string');
      } catch (err) {
        expect(err).toBeInstanceOf(UpstreamFailure);
      }
    });

    it.each(['', 'null', '[]', '{"content":null}', '{"candidates":[]}', '{"content":[null,{"type":"text","text":5},{"type":"tool_use"}]}'])(
      'takes the odd whole reply %s without crashing',
      (text) => {
        try {
          const reply = translator.response(text, call());
          expect(typeof reply.render(settled())).toBe('string');
        } catch (err) {
          expect(err).toBeInstanceOf(UpstreamFailure);
        }
      },
    );

    it.each(['', 'null', '[]', '{"error":null}', '{"error":{"message":5}}', '<html>bad gateway</html>'])(
      'puts the odd error body %s in an OpenAI envelope',
      (text) => {
        const e = translator.error(422, text);
        expect(e.status).toBe(422);
        const parsed = JSON.parse(e.body) as { error: Record<string, unknown> };
        expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message', 'param', 'type']);
        expect(typeof parsed.error.message).toBe('string');
      },
    );
  });
}

/** A call of `model` on an upstream of `protocol` (for the broken-reply table). */
function brokenCall(protocol: string): CallInfo {
  return {
    model: modelInfo({ name: `m-${protocol}`, ownedBy: protocol, protocol: protocol as 'openai' | 'anthropic' | 'gemini' }),
    stream: false,
    requestId: 'req_broken',
    created: 1764120000,
  };
}

/**
 * One table of broken upstream replies, run against every upstream protocol of a client surface:
 * a reply that is not JSON, not an object or not the upstream's reply shape, and a stream event
 * that is not JSON or not an object, are each the channel's protocol failure (the pipeline tries
 * another channel), never a crash. `notAReply` is an object the upstream's protocol does not answer
 * with (none for Gemini: a reply without candidates is an empty answer to some surfaces).
 */
export function describeBrokenReplies(
  surface: string,
  translators: Record<string, { translator: Translator; notAReply?: string }>,
  clientReq: ClientRequest,
): void {
  const kindOf = (run: () => unknown): string => {
    try {
      run();
    } catch (err) {
      expect(err).toBeInstanceOf(UpstreamFailure);
      return (err as UpstreamFailure).kind;
    }
    throw new Error('did not throw');
  };
  describe(`${surface} client: broken upstream replies`, () => {
    for (const [upstream, { translator, notAReply }] of Object.entries(translators)) {
      it(`from ${upstream}: a reply that is not JSON, not an object, or not a reply is a protocol failure`, () => {
        for (const text of ['not json', '[]', '[1, 2]', '"text"', 'null', ...(notAReply === undefined ? [] : [notAReply])])
          expect(
            kindOf(() => translator.response(text, brokenCall(upstream))),
            text,
          ).toBe('protocol');
      });
      it(`from ${upstream}: a stream event that is not JSON or not an object is a protocol failure`, () => {
        for (const data of ['{"cut":', '[1, 2]', 'null', '7']) {
          const st = translator.stream({ ...brokenCall(upstream), stream: true }, clientReq);
          expect(
            kindOf(() => st.push({ event: 'message', data, raw: `data: ${data}\n\n` })),
            data,
          ).toBe('protocol');
          expect(st.finished).toBe(false);
        }
      });
    }
  });
}

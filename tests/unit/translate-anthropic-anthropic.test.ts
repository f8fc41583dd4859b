import { describe, expect, it } from 'vitest';
import { anthropicToAnthropic as t } from '@/lib/gateway/translate/anthropic-anthropic';
import type { CallInfo } from '@/lib/gateway/translate/types';
import type { JsonObject } from '@/lib/gateway/body';
import { clientReq, testModel } from '../support/anthropic-client-harness';

const call: CallInfo = { model: testModel({ name: 'claude-sonnet-4-5', ownedBy: 'anthropic' }), stream: false, requestId: 'req_03', created: 1764120000 };

describe('anthropic -> anthropic (the mirror)', () => {
  it('keeps the bytes when there is nothing Anthropic would refuse', () => {
    const req = clientReq({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], future_field: { x: 1 } });
    expect(String(t.request(req, call).body)).toBe(req.body.text);
  });

  it('folds system-role messages: leading ones into the system prompt, later ones into user turns (after the tool results)', () => {
    const out = t.request(
      clientReq({
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        system: 'Top.',
        messages: [
          { role: 'system', content: 'Lead.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} }] },
          { role: 'system', content: 'Env.' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
        ],
      }),
      call,
    );
    const body = JSON.parse(String(out.body)) as JsonObject;
    expect(body.system).toEqual([
      { type: 'text', text: 'Top.' },
      { type: 'text', text: 'Lead.' },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
      { role: 'user', content: [{ type: 'text', text: 'Env.' }] },
    ]);
    expect(out.dropped).toBeUndefined();
  });
});

// The broken-reply cases of each client surface, one table run against every upstream protocol
// (tests/support/translator-robustness.ts), instead of a copy in each pair's test file.
import { chatTranslators, geminiTranslators } from '@/lib/gateway/translate';
import { clientReq } from '../support/openai-client-harness';
import { describeBrokenReplies } from '../support/translator-robustness';

const gem = { framing: 'sse', includeThoughts: false } as const;
const NOT_A_REPLY: Record<string, string | undefined> = { openai: '{"object":"list"}', anthropic: '{"type":"message"}' };
for (const [surface, req] of [
  ['openai', clientReq({ messages: [{ role: 'user', content: 'Hi' }] })],
  ['anthropic', clientReq({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })],
] as const) {
  const pairs = chatTranslators[surface];
  describeBrokenReplies(surface, Object.fromEntries(Object.entries(pairs).map(([up, translator]) => [up, { translator, notAReply: NOT_A_REPLY[up] }])), req);
}
describeBrokenReplies(
  'gemini',
  Object.fromEntries(Object.entries(geminiTranslators).map(([up, make]) => [up, { translator: make(gem), notAReply: NOT_A_REPLY[up] }])),
  clientReq({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
);

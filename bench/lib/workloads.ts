// The request bodies every mode sends, and the checks that a reply is the kind expected.

export const CHAT = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello to the benchmark.' },
  ],
  max_tokens: 32,
  temperature: 0.2,
});
export const CHAT_STREAM = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  max_tokens: 64,
  stream: true,
});
// The concurrent-streams check: a model served by the upstream's /long prefix (chunks --stream-chunk-ms apart).
export const LONG_MODEL = 'bench-long-stream';
export const CHAT_STREAM_LONG = JSON.stringify({
  model: LONG_MODEL,
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  max_tokens: 64,
  stream: true,
});
export const EMBED = JSON.stringify({ model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog.' });
// A long conversation (40 turns, ~64 KB): what a chat with history or retrieved context sends.
export const CHAT_64K = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `Turn ${i}: ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(28)}`,
  })),
  max_tokens: 32,
});
export const MESSAGES = JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] });
// The translated pairs: an OpenAI client on a Claude model, an Anthropic client on a GPT model.
const withFields = (body: string, fields: Record<string, unknown>) => JSON.stringify({ ...(JSON.parse(body) as object), ...fields });
export const CHAT_ON_CLAUDE = withFields(CHAT, { model: 'claude-haiku-4-5' });
export const CHAT_STREAM_ON_CLAUDE = withFields(CHAT_STREAM, { model: 'claude-haiku-4-5' });
export const MESSAGES_ON_GPT = withFields(MESSAGES, { model: 'gpt-4o-mini' });
export const MESSAGES_STREAM = withFields(MESSAGES, { stream: true });
export const MESSAGES_STREAM_ON_GPT = withFields(MESSAGES, { model: 'gpt-4o-mini', stream: true });

type Json = { choices?: { message?: { content?: unknown } }[]; data?: { embedding?: unknown }[]; content?: { text?: unknown }[] };
const parse = (b: string) => JSON.parse(b) as Json;
export const isChat = (b: string) => parse(b).choices?.[0]?.message?.content !== undefined;
export const isEmbedding = (b: string) => Array.isArray(parse(b).data?.[0]?.embedding);
export const isMessage = (b: string) => parse(b).content?.[0]?.text !== undefined;
export const isStream = (b: string) => b.includes('data: [DONE]');

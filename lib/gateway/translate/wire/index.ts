// The wire protocols the translators speak, in one place: OpenAI chat, Anthropic Messages,
// Gemini and Responses (request, reply, stream events, error envelope each), and what reading
// any of them from outside shares (json.ts).
import type * as Anthropic from './anthropic';
import type * as Gemini from './gemini';
import type * as OpenAIChat from './openai-chat';
import type * as Responses from './responses';

export * from './json';
export type { Anthropic, Gemini, OpenAIChat, Responses };

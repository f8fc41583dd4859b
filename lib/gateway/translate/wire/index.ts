// The wire protocols the translators speak, in one place: OpenAI chat, Anthropic Messages,
// Gemini and Responses (request, reply, stream events, error envelope each), and what reading
// any of them from outside shares (json.ts).
export * from './json';
export type * as OpenAIChat from './openai-chat';
export type * as Anthropic from './anthropic';
export type * as Gemini from './gemini';
export type * as Responses from './responses';

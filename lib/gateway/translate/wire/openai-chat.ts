// OpenAI's Chat Completions wire format (POST /v1/chat/completions): the request, the whole reply
// (chat.completion), the stream's events (chat.completion.chunk, then `data: [DONE]`) and the
// error envelope. Only what the gateway reads or writes is spelt out; the rest passes as a plain JSON object.
import type { JsonObject } from './json';

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatFileContent {
  filename?: string;
  file_data?: string;
  file_id?: string;
}

export type ChatContentPart =
  | { type: 'text'; text: string }
  /** `detail` is 'auto', 'low' or 'high' on OpenAI; a Responses client's is passed on as it came. */
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: ChatFileContent }
  | { type: 'refusal'; refusal: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  refusal?: string | null;
  /** Anthropic's signed thinking blocks as an Anthropic upstream sent them (the LiteLLM convention). */
  thinking_blocks?: JsonObject[];
}

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonObject; strict?: boolean };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } & JsonObject;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  n?: number;
  tools?: ChatFunctionTool[];
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: boolean;
  response_format?: { type: 'text' | 'json_object' | 'json_schema'; json_schema?: JsonObject };
  reasoning_effort?: string;
  service_tier?: string;
  user?: string;
  presence_penalty?: number;
  frequency_penalty?: number;
  seed?: number;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number };
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatMessage; finish_reason: ChatFinishReason | null; logprobs?: null }[];
  usage?: ChatUsage;
  service_tier?: string;
  system_fingerprint?: string | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    /** A tool call's fragments: its id and name in the first, arguments in pieces after. */
    delta: Partial<Omit<ChatMessage, 'tool_calls'>> & {
      tool_calls?: (Partial<Omit<ChatToolCall, 'function'>> & { index: number; function?: Partial<ChatToolCall['function']> })[];
    };
    finish_reason: ChatFinishReason | null;
  }[];
  usage?: ChatUsage | null;
  service_tier?: string;
  /** An upstream's failure inside a stream (some OpenAI-compatible servers send one). */
  error?: unknown;
}

export interface ChatErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

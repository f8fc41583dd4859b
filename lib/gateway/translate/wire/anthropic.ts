// Anthropic's Messages wire format (POST /v1/messages): the request, the reply (a message), the
// stream's events (message_start … message_stop) and the error envelope.
import type { JsonObject } from './json';

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: JsonObject;
  citations?: unknown[];
}
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}
export interface ToolUseBlock {
  type: 'tool_use' | 'server_tool_use';
  id: string;
  name: string;
  input: JsonObject;
}
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
  cache_control?: JsonObject;
}
export interface ImageBlock {
  type: 'image' | 'document';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } | { type: 'text'; media_type: string; data: string };
  title?: string;
  cache_control?: JsonObject;
}
export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export interface MessagesTool {
  name: string;
  description?: string;
  input_schema: JsonObject;
  type?: string;
  cache_control?: JsonObject;
}

export interface MessagesRequest {
  model: string;
  messages: MessageParam[];
  max_tokens: number;
  system?: string | TextBlock[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: MessagesTool[];
  tool_choice?: { type: 'auto' | 'any' | 'none' | 'tool'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' | 'adaptive' };
  metadata?: { user_id?: string };
  service_tier?: string;
}

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number };
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number };
  service_tier?: string;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export type MessagesStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: MessagesStopReason | null; stop_sequence: string | null }; usage: Partial<MessagesUsage> }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

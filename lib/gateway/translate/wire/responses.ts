// OpenAI's Responses wire format (POST /v1/responses): the request, the response object, its
// stream events (response.created … response.completed, each with a sequence_number) and the
// items of its `output`.
import type { JsonObject } from './json';

export type ResponseStatus = 'completed' | 'incomplete' | 'in_progress' | 'failed' | 'cancelled' | 'queued';

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export type ResponseOutputItem =
  | { type: 'message'; id: string; status: ResponseStatus; role: 'assistant'; content: OutputText[] }
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content?: string }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: ResponseStatus; namespace?: string }
  | { type: 'custom_tool_call'; id: string; call_id: string; name: string; input: string; status: ResponseStatus }
  | { type: 'local_shell_call'; id: string; call_id: string; action: JsonObject; status: ResponseStatus };

export interface ResponsesRequest {
  model: string;
  input: string | JsonObject[];
  instructions?: string;
  stream?: boolean;
  tools?: JsonObject[];
  tool_choice?: unknown;
  max_output_tokens?: number;
  reasoning?: { effort?: string; summary?: string };
  text?: { format?: JsonObject };
  previous_response_id?: string;
  store?: boolean;
  include?: string[];
}

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  model: string;
  output: ResponseOutputItem[];
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason: string } | null;
  error?: unknown;
}

export interface ResponsesStreamEvent {
  type: string;
  sequence_number?: number;
  response?: ResponseObject;
  item?: ResponseOutputItem;
  output_index?: number;
  item_id?: string;
  delta?: string;
  error?: unknown;
}

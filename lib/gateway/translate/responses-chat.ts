// The OpenAI Responses API over Chat Completions: one mapping, composed with the chat translators.
// A Responses request becomes a Chat Completions body (the stored conversation of
// `previous_response_id` first), which the OpenAI-chat translator of the channel's protocol
// (identity, Anthropic or Gemini) carries upstream; its chat.completion, or its chunks, come back
// here and become a Response object, or Responses stream events. Nothing here knows the upstream.
import type { OpenAIChat, Responses } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { GatewayError } from '@/lib/errors';
import type { JsonBody } from '@/lib/gateway/body';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { mergeDropped } from '@/lib/gateway/translate/dropped';
import { openReasoning, sealReasoning, type ReasoningState } from '@/lib/gateway/translate/reasoning-seal';
import { invalidParam, serviceMember } from '@/lib/gateway/translate/openai-client';
import { CALL_ID_PREFIX, chatCallOfItem, chatToolChoiceOf, clientCallItem, toolPlanOf, type ClientTool } from '@/lib/gateway/translate/responses-tools';
import type {
  CallInfo,
  ClientRequest,
  JsonObject,
  Settlement,
  StreamTranslator,
  TranslatedReply,
  Translator,
  UpstreamProtocol,
} from '@/lib/gateway/translate/types';

// ---------------------------------------------------------------------------------------------
// Request: Responses -> Chat Completions

/** A chat message of a conversation, as stored between turns (chat shape: every translator reads it). */
/**
 * A chat message of a Responses conversation: built here from the input, or read back from the
 * store (`previous_response_id`), then handed to a chat translator as a client's message, which
 * checks it field by field. Hence received, not exact.
 */
export type ChatMessage = Received<OpenAIChat.ChatMessage>;

function chatResponseFormat(text: unknown): JsonObject | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isObject(text)) throw invalidParam('text', '`text` must be an object.');
  const format = text.format;
  if (format === undefined || format === null) return undefined;
  if (!isObject(format)) throw invalidParam('text.format', '`text.format` must be an object.');
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || format.name === '') throw invalidParam('text.format.name', '`text.format.name` must be a non-empty string.');
    if (!isObject(format.schema)) throw invalidParam('text.format.schema', '`text.format.schema` must be a JSON Schema object.');
    const spec: JsonObject = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') spec.description = format.description;
    if (typeof format.strict === 'boolean') spec.strict = format.strict;
    return { type: 'json_schema', json_schema: spec };
  }
  throw invalidParam('text.format.type', '`text.format.type` must be "text", "json_object" or "json_schema".');
}

/** A user/system content part of a Responses input message, as a chat content part. */
function chatPart(part: unknown, at: string): OpenAIChat.ChatContentPart {
  if (!isObject(part)) throw invalidParam(at, `\`${at}\` must be a content part object.`);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
      if (typeof part.text !== 'string') throw invalidParam(`${at}.text`, `\`${at}.text\` must be a string.`);
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: typeof part.refusal === 'string' ? part.refusal : '' };
    case 'input_image': {
      if (typeof part.image_url !== 'string') {
        throw invalidParam(`${at}.image_url`, `\`${at}.image_url\` must be a data URL or an http(s) URL (uploaded file ids are not available).`);
      }
      const image: { url: string; detail?: string } = { url: part.image_url };
      if (typeof part.detail === 'string') image.detail = part.detail;
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      if (typeof part.file_data !== 'string')
        throw invalidParam(`${at}.file_data`, `\`${at}.file_data\` must be a base64 data URL (uploaded file ids and file URLs are not available).`);
      const file: OpenAIChat.ChatFileContent = { file_data: part.file_data };
      if (typeof part.filename === 'string') file.filename = part.filename;
      return { type: 'file', file };
    }
    default:
      throw invalidParam(`${at}.type`, `\`${at}.type\` ${JSON.stringify(part.type)} is not a supported content part type.`);
  }
}

function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(at, `\`${at}\` must be a string or an array of content parts.`);
  return content
    .map((p, j) => {
      const part = chatPart(p, `${at}[${j}]`);
      if (part.type !== 'text') throw invalidParam(`${at}[${j}]`, `\`${at}[${j}]\` must be a text part here.`);
      return part.text;
    })
    .join('');
}

const ROLES = new Set(['user', 'system', 'developer', 'assistant']);

/** The Responses `input` (a string or items) as chat messages, in order. */
export function chatMessagesOf(input: unknown, account = ''): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalidParam('input', '`input` must be a string or an array of input items.');
  const out: ChatMessage[] = [];
  input.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalidParam(at, `\`${at}\` must be an object.`);
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const role = item.role;
        if (typeof role !== 'string' || !ROLES.has(role)) throw invalidParam(`${at}.role`, `\`${at}.role\` must be one of user, system, developer, assistant.`);
        if (role === 'assistant') {
          out.push({ role, content: textOf(item.content, `${at}.content`) });
        } else if (role === 'user') {
          const content =
            typeof item.content === 'string'
              ? item.content
              : Array.isArray(item.content)
                ? item.content.map((p, j) => chatPart(p, `${at}.content[${j}]`))
                : undefined;
          if (content === undefined) throw invalidParam(`${at}.content`, `\`${at}.content\` must be a string or an array of content parts.`);
          out.push({ role, content });
        } else {
          out.push({ role, content: textOf(item.content, `${at}.content`) });
        }
        return;
      }
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call': {
        const call = chatCallOfItem(item, at);
        // Consecutive calls (and a call right after the assistant's text) are one assistant turn.
        const last = out.at(-1);
        if (last?.role === 'assistant') {
          last.tool_calls = [...(Array.isArray(last.tool_calls) ? last.tool_calls : []), call];
        } else {
          out.push({ role: 'assistant', content: null, tool_calls: [call] });
        }
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output': {
        // local_shell_call_output names its call by `id` in OpenAI's schema; Codex sends `call_id`.
        const callId = item.call_id ?? (type === 'local_shell_call_output' ? item.id : undefined);
        if (typeof callId !== 'string' || callId === '') throw invalidParam(`${at}.call_id`, `\`${at}.call_id\` must be a non-empty string.`);
        const output = typeof item.output === 'string' ? item.output : Array.isArray(item.output) ? textOf(item.output, `${at}.output`) : undefined;
        if (output === undefined) throw invalidParam(`${at}.output`, `\`${at}.output\` must be a string.`);
        out.push({ role: 'tool', tool_call_id: callId, content: output });
        return;
      }
      case 'reasoning': {
        // A reasoning item the gateway sealed gives the upstream back its own state (signed
        // thinking, thought signatures); any other (OpenAI's, forged, altered) is left out, as
        // the upstream could not read it.
        const state = openReasoning(item.encrypted_content, account);
        if (state) restoreReasoning(out, state);
        return;
      }
      default:
        throw invalidParam(`${at}.type`, `Input item type ${JSON.stringify(type)} (\`${at}.type\`) is not supported by this gateway.`);
    }
  });
  return out;
}

/**
 * Puts a sealed reasoning state back on the assistant turn it came from (the one holding its
 * calls; the turn before the item for a turn without calls): the calls' upstream members and the
 * signed thinking blocks, which the chat translators send on as their upstream wants them.
 */
function restoreReasoning(out: ChatMessage[], state: ReasoningState): void {
  const callIds = new Set(Object.keys(state.calls ?? {}));
  const assistants = out.filter((m) => m.role === 'assistant');
  const owner =
    assistants.find((m) => Array.isArray(m.tool_calls) && m.tool_calls.some((c) => isObject(c) && callIds.has(c.id as string))) ??
    (callIds.size === 0 ? assistants.at(-1) : undefined);
  if (!owner) return;
  if (Array.isArray(owner.tool_calls) && state.calls) {
    owner.tool_calls = owner.tool_calls.map((c) => (isObject(c) && state.calls?.[c.id as string] ? { ...c, ...state.calls[c.id as string] } : c));
  }
  if (state.thinking_blocks?.length) owner.thinking_blocks = state.thinking_blocks;
}

/** What a Responses request becomes: the chat body and the messages this turn adds to the conversation. */
export interface ChatPlan {
  /** The Chat Completions request (`model` is set per attempt by the chat translator). */
  chat: JsonObject;
  /** This turn's input as chat messages (without `instructions` or the history): stored with the reply. */
  conversation: ChatMessage[];
  /** Chat function name -> the client's tool (namespaced, free-form, local shell), for the reply. */
  tools: Map<string, ClientTool>;
  /** What the chat request leaves out (hosted tools such as `web_search`): only a native channel runs them. */
  dropped: string[];
  /** The 400 of a `tool_choice` that forces a hosted tool: the request cannot be served without it. */
  forcedHosted?: GatewayError;
}

/**
 * The Chat Completions body for a Responses request. `history` is the stored conversation of
 * `previous_response_id` (its instructions are not carried over, as on OpenAI).
 */
export function chatPlanOf(body: JsonObject, history: ChatMessage[] = [], account = ''): ChatPlan {
  const conversation = chatMessagesOf(body.input, account);
  const messages: ChatMessage[] = [];
  if (body.instructions !== undefined && body.instructions !== null) {
    if (typeof body.instructions !== 'string') throw invalidParam('instructions', '`instructions` must be a string.');
    if (body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  }
  messages.push(...history, ...conversation);
  if (messages.length === 0) throw invalidParam('input', '`input` must not be empty.');
  const chat: JsonObject = { model: body.model, messages };
  const toolPlan = toolPlanOf(body.tools);
  const tools = toolPlan.tools;
  if (tools.length > 0) chat.tools = tools;
  const { choice: toolChoice, forcedHosted } = chatToolChoiceOf(body.tool_choice);
  if (toolChoice !== undefined && tools.length > 0) chat.tool_choice = toolChoice;
  if (typeof body.parallel_tool_calls === 'boolean' && tools.length > 0) chat.parallel_tool_calls = body.parallel_tool_calls;
  // OpenAI's chat API takes the same cache routing key; the other translators leave it out.
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '') chat.prompt_cache_key = body.prompt_cache_key;
  if (typeof body.max_output_tokens === 'number') chat.max_completion_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') chat.temperature = body.temperature;
  if (typeof body.top_p === 'number') chat.top_p = body.top_p;
  if (typeof body.user === 'string') chat.user = body.user;
  const format = chatResponseFormat(body.text);
  if (format) chat.response_format = format;
  const reasoning = body.reasoning;
  if (isObject(reasoning) && typeof reasoning.effort === 'string') chat.reasoning_effort = reasoning.effort;
  if (body.stream === true) chat.stream = true;
  const plan: ChatPlan = { chat, conversation, tools: toolPlan.byChatName, dropped: toolPlan.hosted };
  if (forcedHosted) {
    plan.forcedHosted = invalidParam(
      'tool_choice',
      `\`tool_choice\` forces the ${forcedHosted} tool, which only OpenAI's own Responses service runs: no channel of this model can serve it.`,
    );
  }
  return plan;
}

/** A chat body as the chat translators take a client's: its bytes and its parsed JSON. */
export function chatClientRequest(chat: JsonObject, headers: Record<string, string | undefined>): ClientRequest {
  const text = JSON.stringify(chat);
  const body: JsonBody = { raw: Buffer.from(text), text, json: chat, verbatim: true };
  return { body, headers };
}

// ---------------------------------------------------------------------------------------------
// Reply: chat.completion -> Response

/** Ids of one response and its items, derived from the request id (unique across instances). */
export function responseIds(requestId: string) {
  const base = requestId.replace(/^req_/, '');
  return { response: `resp_${base}`, message: `msg_${base}`, reasoning: `rs_${base}`, functionCall: (i: number) => `fc_${base}_${i}` };
}

/** The request fields a Response object echoes. */
export function echoedFields(body: JsonObject): JsonObject {
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  const text = isObject(body.text) && isObject(body.text.format) ? { format: body.text.format } : { format: { type: 'text' } };
  return {
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    reasoning: {
      effort: typeof reasoning.effort === 'string' ? reasoning.effort : null,
      summary: typeof reasoning.summary === 'string' ? reasoning.summary : null,
    },
    store: body.store !== false,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text,
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: 'disabled',
    user: typeof body.user === 'string' ? body.user : null,
    metadata: isObject(body.metadata) ? body.metadata : {},
  };
}

export function responseUsage(s: Settlement): JsonObject {
  const u = s.usage;
  const input = u.promptTokens + u.cacheReadTokens + u.cacheWriteTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: input + u.completionTokens,
  };
}

type Status = 'completed' | 'incomplete';

function statusOf(finish: unknown): { status: Status; incomplete: JsonObject | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

const outputText = (text: string): Responses.OutputText => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** A tool call as the conversation keeps it: upstream extras (Gemini's thought signature) included. */
interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  extra: JsonObject;
}

/** What one turn produced, upstream-neutral. */
interface Turn {
  reasoning: string;
  text: string;
  toolCalls: ToolCall[];
  finish: unknown;
  /** Signed thinking (Anthropic's `thinking_blocks` as the chat translator passes them on). */
  thinkingBlocks: JsonObject[];
}

/** The client asked for reasoning it can send back (`include: ["reasoning.encrypted_content"]`: Codex, stateless clients). */
export function wantsEncryptedReasoning(body: JsonObject): boolean {
  return Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
}

/**
 * The reasoning item that carries, sealed, what the upstream needs back next turn (signed thinking,
 * Gemini's thought signatures on the calls); undefined when the turn holds nothing of the kind.
 */
function sealedReasoningItem(id: string, turn: Turn, account = ''): Responses.ResponseOutputItem | undefined {
  const calls: Record<string, JsonObject> = {};
  for (const t of turn.toolCalls) if (Object.keys(t.extra).length > 0) calls[t.id] = t.extra;
  const state: ReasoningState = {};
  if (turn.thinkingBlocks.length > 0) state.thinking_blocks = turn.thinkingBlocks;
  if (Object.keys(calls).length > 0) state.calls = calls;
  if (!state.thinking_blocks && !state.calls) return undefined;
  return { id, type: 'reasoning', summary: [], encrypted_content: sealReasoning(state, account) };
}

function outputItems(ids: ReturnType<typeof responseIds>, turn: Turn, status: Status, rt: ResponsesTurn): JsonObject[] {
  const items: JsonObject[] = [];
  if (turn.reasoning) items.push(reasoningItem(ids.reasoning, turn.reasoning));
  if (turn.text || turn.toolCalls.length === 0) items.push(messageItem(ids.message, turn.text, status));
  turn.toolCalls.forEach((t, i) => items.push(callItem(ids, i, t, 'completed', rt.tools)));
  // Last, as in a stream, where signatures are known only once the calls are complete.
  const sealed = wantsEncryptedReasoning(rt.body) ? sealedReasoningItem(`${ids.reasoning}_state`, turn, rt.account) : undefined;
  if (sealed) items.push(sealed);
  return items;
}

const reasoningItem = (id: string, text: string): Responses.ResponseOutputItem => ({ id, type: 'reasoning', summary: [{ type: 'summary_text', text }] });
const messageItem = (id: string, text: string, status: Status): Responses.ResponseOutputItem => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: [outputText(text)],
});

/** The output item of the i-th tool call: the kind of tool the client declared (function, namespaced, custom, local shell). */
function callItem(ids: ReturnType<typeof responseIds>, i: number, t: ToolCall, status: string, tools?: Map<string, ClientTool>): JsonObject {
  const { type, ...fields } = clientCallItem(t, tools);
  const prefix = CALL_ID_PREFIX[type as string] ?? 'fc';
  const id = prefix === 'fc' ? ids.functionCall(i) : ids.functionCall(i).replace(/^fc_/, `${prefix}_`);
  return { id, type, status, ...fields };
}

/** The assistant's turn as a chat message, for the stored conversation. */
function assistantMessage(turn: Turn): ChatMessage {
  const msg: ChatMessage = { role: 'assistant', content: turn.text || (turn.toolCalls.length > 0 ? null : '') };
  if (turn.toolCalls.length > 0)
    msg.tool_calls = turn.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments }, ...t.extra }));
  if (turn.thinkingBlocks.length > 0) msg.thinking_blocks = turn.thinkingBlocks;
  return msg;
}

/** A finished turn: what the client got, and what is stored for GET and previous_response_id. */
export interface FinishedResponse {
  id: string;
  /** The Response object's JSON text, as sent. */
  text: string;
  /** This turn's messages: its input and its reply (chat messages); earlier turns are stored with theirs. */
  conversation: ChatMessage[];
  /** Output item ids the upstream named (a natively served response): found by item_reference. */
  itemIds?: string[];
}

/** Per-request facts the Responses translators share. */
export interface ResponsesTurn {
  /** The client's Responses body. */
  body: JsonObject;
  /** The chat request the chat translators carry. */
  chat: ClientRequest;
  conversation: ChatMessage[];
  /** Called with the finished response just before its last bytes are written. */
  onFinish(finished: FinishedResponse): void;
  /** The next sequence number of the stream sent to the client (for an error event after it). */
  sequence?: number;
  /** Chat function name -> the client's tool: how the model's calls are written back. */
  tools?: Map<string, ClientTool>;
  /** What the chat request leaves out (hosted tools), named on every translated upstream call. */
  dropped?: readonly string[];
  /** The account whose sealed reasoning items this turn reads and writes. */
  account?: string;
}

/** A mid-stream error as the Responses API sends it: an `error` event (openai-node and the AI SDK read `error`). */
export function responsesStreamError(rt: ResponsesTurn, errorBody: string): string {
  const seq = rt.sequence ?? 0;
  rt.sequence = seq + 1;
  return `event: error\ndata: {"type":"error","sequence_number":${seq},${errorBody.slice(1)}\n\n`;
}

/** The Response object's JSON text, the gateway's `service` member (cost as a bare JSON number) last. */
function renderResponse(
  call: CallInfo,
  turn: ResponsesTurn,
  status: string,
  incomplete: JsonObject | null,
  output: JsonObject[],
  usage: JsonObject | null,
  settled: Settlement | null,
): string {
  const ids = responseIds(call.requestId);
  const json = JSON.stringify({
    id: ids.response,
    object: 'response',
    created_at: call.created,
    status,
    background: false,
    error: null,
    incomplete_details: incomplete,
    model: call.model.name,
    output,
    usage,
    ...echoedFields(turn.body),
  });
  return settled ? `${json.slice(0, -1)},"service":${serviceMember(settled)}}` : json;
}

function parseChat(text: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamFailure('protocol', 'chat translator produced malformed JSON');
  }
  // The chat translators render an object; anything else is as broken as malformed JSON.
  if (!isObject(parsed)) throw new UpstreamFailure('protocol', 'chat translator produced malformed JSON');
  return parsed;
}

/** The turn of a rendered chat.completion. */
function turnOfCompletion(completion: JsonObject): Turn {
  const choice = Array.isArray(completion.choices) && isObject(completion.choices[0]) ? completion.choices[0] : {};
  const message = isObject(choice.message) ? choice.message : {};
  const toolCalls: ToolCall[] = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isObject).map((c) => {
        const { id, type: _type, function: fn, ...extra } = c;
        const f = isObject(fn) ? fn : {};
        return { id: String(id ?? ''), name: String(f.name ?? ''), arguments: typeof f.arguments === 'string' ? f.arguments : '', extra };
      })
    : [];
  return {
    reasoning: typeof message.reasoning_content === 'string' ? message.reasoning_content : '',
    text: typeof message.content === 'string' ? message.content : '',
    toolCalls,
    finish: choice.finish_reason,
    thinkingBlocks: Array.isArray(message.thinking_blocks) ? message.thinking_blocks.filter(isObject) : [],
  };
}

// ---------------------------------------------------------------------------------------------
// Stream: chat.completion.chunk events -> Responses events

type OpenItem = { kind: 'message' | 'reasoning'; index: number; id: string; text: string } | { kind: 'call'; index: number; id: string; call: ToolCall };

/**
 * Responses events from the chat chunks an inner chat translator emits. Items open as their first
 * delta arrives and close (`…done`, `output_item.done`) when another kind of item starts or the
 * reply finishes; text and tool calls of one reply each get their own item, in arrival order.
 */
export class ResponsesEventWriter {
  private seq = 0;
  private started = false;
  private readonly ids: ReturnType<typeof responseIds>;
  private readonly items: JsonObject[] = [];
  private current: OpenItem | null = null;
  /** Open tool-call items by the chat chunk's tool-call index. */
  private readonly calls = new Map<number, Extract<OpenItem, { kind: 'call' }>>();
  private readonly turn: Turn = { reasoning: '', text: '', toolCalls: [], finish: null, thinkingBlocks: [] };
  private buffer = '';
  /** Message items opened so far. */
  private messages = 0;

  constructor(
    private readonly call: CallInfo,
    private readonly rt: ResponsesTurn,
  ) {
    this.ids = responseIds(call.requestId);
  }

  private event(type: string, payload: JsonObject): string {
    const out = `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.seq++, ...payload })}\n\n`;
    this.rt.sequence = this.seq;
    return out;
  }

  private opening(): string {
    if (this.started) return '';
    this.started = true;
    const response: unknown = JSON.parse(renderResponse(this.call, this.rt, 'in_progress', null, [], null, null));
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  /** The chat translator's bytes (`data: {chunk}` events, `data: [DONE]`) -> Responses events. */
  push(chatBytes: string): string {
    this.buffer += chatBytes;
    let out = '';
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
      const event = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '' || data === '[DONE]') continue;
        out += this.chunk(parseChat(data));
      }
    }
    return out;
  }

  private chunk(chunk: JsonObject): string {
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (!choice) return '';
    let out = '';
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') out += this.text('reasoning', delta.reasoning_content);
    if (typeof delta.content === 'string' && delta.content !== '') out += this.text('message', delta.content);
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) if (isObject(tc)) out += this.toolCall(tc);
    if (Array.isArray(delta.thinking_blocks)) this.turn.thinkingBlocks.push(...delta.thinking_blocks.filter(isObject));
    if (choice.finish_reason) {
      this.turn.finish = choice.finish_reason;
      out += this.opening() + this.closeAll();
    }
    return out;
  }

  private text(kind: 'message' | 'reasoning', piece: string): string {
    let out = this.opening();
    if (this.current?.kind !== kind) {
      out += this.closeAll();
      const index = this.items.length;
      // A later text item of the same reply (text, a tool call, text again) gets an id of its own.
      const n = kind === 'message' ? this.messages++ : 0;
      const id = kind === 'message' ? (n === 0 ? this.ids.message : `${this.ids.message}_${n}`) : this.ids.reasoning;
      this.items.push({});
      this.current = { kind, index, id, text: '' };
      if (kind === 'message') {
        out += this.event('response.output_item.added', {
          output_index: index,
          item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        });
        out += this.event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: outputText('') });
      } else {
        out += this.event('response.output_item.added', { output_index: index, item: { id, type: 'reasoning', summary: [] } });
        out += this.event('response.reasoning_summary_part.added', {
          item_id: id,
          output_index: index,
          summary_index: 0,
          part: { type: 'summary_text', text: '' },
        });
      }
    }
    const cur = this.current as Extract<OpenItem, { kind: 'message' | 'reasoning' }>;
    cur.text += piece;
    if (kind === 'message') {
      this.turn.text += piece;
      out += this.event('response.output_text.delta', { item_id: cur.id, output_index: cur.index, content_index: 0, delta: piece, logprobs: [] });
    } else {
      this.turn.reasoning += piece;
      out += this.event('response.reasoning_summary_text.delta', { item_id: cur.id, output_index: cur.index, summary_index: 0, delta: piece });
    }
    return out;
  }

  private toolCall(tc: JsonObject): string {
    const index = typeof tc.index === 'number' ? tc.index : 0;
    const fn = isObject(tc.function) ? tc.function : {};
    let out = this.opening();
    let open = this.calls.get(index);
    if (!open) {
      // A text or reasoning item in progress is complete once a tool call starts.
      if (this.current && this.current.kind !== 'call') out += this.closeCurrent();
      const { index: _i, id, type: _t, function: _f, ...extra } = tc;
      const call: ToolCall = { id: typeof id === 'string' ? id : '', name: typeof fn.name === 'string' ? fn.name : '', arguments: '', extra };
      const outputIndex = this.items.length;
      this.items.push({});
      const item = callItem(this.ids, this.turn.toolCalls.length, call, 'in_progress', this.rt.tools);
      open = { kind: 'call', index: outputIndex, id: item.id as string, call };
      this.turn.toolCalls.push(call);
      this.calls.set(index, open);
      this.current = open;
      // A free-form or local shell call is written whole when it closes (its input is inside the arguments' JSON).
      if (item.type === 'custom_tool_call') item.input = '';
      out += this.event('response.output_item.added', { output_index: outputIndex, item });
    }
    const fragment = typeof fn.arguments === 'string' ? fn.arguments : '';
    if (fragment) {
      open.call.arguments += fragment;
      if (open.id.startsWith('fc_'))
        out += this.event('response.function_call_arguments.delta', { item_id: open.id, output_index: open.index, delta: fragment });
    }
    return out;
  }

  /** Closes the text or reasoning item in progress. */
  private closeCurrent(): string {
    const cur = this.current;
    if (!cur || cur.kind === 'call') return '';
    this.current = null;
    if (cur.kind === 'message') {
      const item = messageItem(cur.id, cur.text, 'completed');
      this.items[cur.index] = item;
      return (
        this.event('response.output_text.done', { item_id: cur.id, output_index: cur.index, content_index: 0, text: cur.text, logprobs: [] }) +
        this.event('response.content_part.done', { item_id: cur.id, output_index: cur.index, content_index: 0, part: outputText(cur.text) }) +
        this.event('response.output_item.done', { output_index: cur.index, item })
      );
    }
    const item = reasoningItem(cur.id, cur.text);
    this.items[cur.index] = item;
    return (
      this.event('response.reasoning_summary_text.done', { item_id: cur.id, output_index: cur.index, summary_index: 0, text: cur.text }) +
      this.event('response.reasoning_summary_part.done', {
        item_id: cur.id,
        output_index: cur.index,
        summary_index: 0,
        part: { type: 'summary_text', text: cur.text },
      }) +
      this.event('response.output_item.done', { output_index: cur.index, item })
    );
  }

  /** Closes every open item: the text or reasoning in progress, then the tool calls in order. */
  private closeAll(): string {
    let out = this.closeCurrent();
    for (const open of [...this.calls.values()].sort((a, b) => a.index - b.index)) {
      const item: JsonObject = { ...callItem(this.ids, this.turn.toolCalls.indexOf(open.call), open.call, 'completed', this.rt.tools), id: open.id };
      this.items[open.index] = item;
      if (item.type === 'function_call') {
        out += this.event('response.function_call_arguments.done', {
          item_id: open.id,
          output_index: open.index,
          name: item.name,
          arguments: open.call.arguments,
        });
      } else if (item.type === 'custom_tool_call') {
        const input = item.input as string;
        out += this.event('response.custom_tool_call_input.delta', { item_id: open.id, output_index: open.index, delta: input });
        out += this.event('response.custom_tool_call_input.done', { item_id: open.id, output_index: open.index, input });
      }
      out += this.event('response.output_item.done', { output_index: open.index, item });
    }
    this.calls.clear();
    this.current = null;
    return out;
  }

  /** The last event (response.completed, or response.incomplete for a cut reply), with the usage and cost. */
  end(settled: Settlement): string {
    let out = this.opening() + this.closeAll();
    // A reply with nothing in it still has its (empty) message, as the whole reply does.
    if (this.items.length === 0) {
      const index = this.items.length;
      const item = messageItem(this.ids.message, '', 'completed');
      this.items.push(item);
      out += this.event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      out += this.event('response.output_item.done', { output_index: index, item });
    }
    const sealed = wantsEncryptedReasoning(this.rt.body) ? sealedReasoningItem(`${this.ids.reasoning}_state`, this.turn, this.rt.account) : undefined;
    if (sealed) {
      const index = this.items.length;
      this.items.push(sealed);
      out += this.event('response.output_item.added', { output_index: index, item: sealed });
      out += this.event('response.output_item.done', { output_index: index, item: sealed });
    }
    const { status, incomplete } = statusOf(this.turn.finish);
    const text = renderResponse(this.call, this.rt, status, incomplete, this.items, responseUsage(settled), settled);
    this.rt.onFinish({ id: this.ids.response, text, conversation: [...this.rt.conversation, assistantMessage(this.turn)] });
    const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
    const seq = this.seq++;
    this.rt.sequence = this.seq;
    return out + `event: ${type}\ndata: {"type":${JSON.stringify(type)},"sequence_number":${seq},"response":${text}}\n\n`;
  }
}

// ---------------------------------------------------------------------------------------------
// The translator

/** The chat request without Anthropic's signed thinking (no other upstream reads it, OpenAI's may refuse the member). */
function withoutThinkingBlocks(req: ClientRequest): ClientRequest {
  const messages = req.body.json.messages;
  if (!Array.isArray(messages) || !messages.some((m) => isObject(m) && m.thinking_blocks !== undefined)) return req;
  const stripped = messages.map((m) => {
    if (!isObject(m) || m.thinking_blocks === undefined) return m;
    const { thinking_blocks: _t, ...rest } = m;
    return rest;
  });
  return chatClientRequest({ ...req.body.json, messages: stripped }, req.headers);
}

/**
 * A chat translator's refusal, naming the Responses request's field: the chat body was built from
 * it (tools one for one, `text.format` as `response_format`), so its field names are the client's.
 */
function responsesRefusal(err: unknown): unknown {
  if (!(err instanceof GatewayError) || !err.param) return err;
  const param = err.param
    .replace(/^tools\[(\d+)\]\.function\./, 'tools[$1].')
    .replace(/^response_format\.json_schema\./, 'text.format.')
    .replace(/^response_format\b/, 'text.format');
  if (param === err.param) return err;
  return new GatewayError(err.code, err.message.split(err.param).join(param), { param, status: err.status });
}

/** The Responses translator for a channel protocol: `inner` is the OpenAI-chat translator for it. */
export function responsesTranslator(inner: Translator, rt: ResponsesTurn, protocol?: UpstreamProtocol): Translator {
  let chat: ClientRequest | undefined;
  return {
    request(_req, call) {
      chat ??= protocol === 'anthropic' ? rt.chat : withoutThinkingBlocks(rt.chat);
      try {
        const upstream = inner.request(chat, call);
        return rt.dropped?.length ? { ...upstream, dropped: mergeDropped(rt.dropped, upstream.dropped) } : upstream;
      } catch (err) {
        throw responsesRefusal(err);
      }
    },

    response(text, call): TranslatedReply {
      const reply = inner.response(text, call);
      return {
        usage: reply.usage,
        completion: reply.completion,
        render(settled) {
          const turn = turnOfCompletion(parseChat(reply.render(settled)));
          const { status, incomplete } = statusOf(turn.finish);
          const ids = responseIds(call.requestId);
          const body = renderResponse(call, rt, status, incomplete, outputItems(ids, turn, status, rt), responseUsage(settled), settled);
          rt.onFinish({ id: ids.response, text: body, conversation: [...rt.conversation, assistantMessage(turn)] });
          return body;
        },
      };
    },

    stream(call): StreamTranslator {
      const chat = inner.stream(call, rt.chat);
      const events = new ResponsesEventWriter(call, rt);
      return {
        push: (ev) => events.push(chat.push(ev)),
        get usage() {
          return chat.usage;
        },
        get completion() {
          return chat.completion;
        },
        get finished() {
          return chat.finished;
        },
        end(settled) {
          // The chat stream's own ending ([DONE], a usage chunk) has no Responses counterpart.
          events.push(chat.end(settled));
          return events.end(settled);
        },
      };
    },

    error: (status, text) => inner.error(status, text),
  };
}

/** An unknown, expired or another account's response id: OpenAI's 404. */
export function responseNotFound(id: string, param: string | null = null): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`, { param });
}

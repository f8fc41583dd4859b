// The OpenAI chat client's side of every translator whose upstream is not OpenAI: reading the
// client's /v1/chat/completions request into neutral pieces, and writing what the client gets
// back (chat.completion, chat.completion.chunk events, the usage chunk, the error envelope).
// Each upstream translator (openai-anthropic.ts, openai-gemini.ts) maps only between these
// pieces and its upstream's wire format.
import type { OpenAIChat } from '@/lib/gateway/translate/wire';
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import type { CallInfo, ClientRequest, JsonObject, Settlement, TranslatedError } from '@/lib/gateway/translate/types';

// ---------------------------------------------------------------------------------------------
// Reading the client's request

/** A 400 before anything goes upstream, naming the parameter (and, where it is a limit of the model, the model). */
export function invalidParam(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/** "`<param>` is not supported by <model>": a feature the upstream cannot carry. */
export function unsupported(param: string, model: ModelInfo, detail = ''): GatewayError {
  return invalidParam(param, `\`${param}\` is not supported by ${model.name}${detail ? `: ${detail}` : '.'}`);
}

/**
 * Refuses what neither Anthropic nor Gemini can answer in OpenAI's shape: several choices,
 * log probabilities, audio in or out, the legacy `functions` API, web search. Fields that do not
 * change what comes back (seed, store, metadata, service_tier, prompt_cache_key, prediction, ...)
 * are left to each translator, which drops or maps them.
 */
export function refuseUnsupported(body: JsonObject, model: ModelInfo): void {
  const set = (field: string) => body[field] !== undefined && body[field] !== null;
  if (set('n') && body.n !== 1) throw unsupported('n', model, 'only one choice per request (n: 1) can be served by this model');
  if (body.logprobs === true) throw unsupported('logprobs', model);
  if (set('top_logprobs')) throw unsupported('top_logprobs', model);
  if (set('audio')) throw unsupported('audio', model, 'audio output is not available');
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) throw unsupported('modalities', model, 'only text output is available');
  if (set('functions')) throw unsupported('functions', model, 'send `tools` instead');
  if (set('function_call')) throw unsupported('function_call', model, 'send `tool_choice` instead');
  if (set('web_search_options')) throw unsupported('web_search_options', model);
}

/**
 * The output cap sent upstream: `max_completion_tokens` (OpenAI's current name) or else `max_tokens`,
 * at most the model's own maximum; the model's maximum when the client set neither (Anthropic
 * requires the field, and an OpenAI client expects no cap it did not ask for).
 */
export function maxOutputTokens(body: JsonObject, model: ModelInfo): number {
  const asked = [body.max_completion_tokens, body.max_tokens].find((v) => v !== undefined && v !== null);
  if (asked === undefined) return model.maxOutputTokens;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1) {
    const param = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
    throw invalidParam(param, `\`${param}\` must be a positive integer.`);
  }
  return Math.min(asked, model.maxOutputTokens);
}

/** `stop` as a list (OpenAI takes a string or up to 4 strings); empty strings are no stop sequence. */
export function stopSequences(body: JsonObject): string[] | undefined {
  const stop = body.stop;
  if (stop === undefined || stop === null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw invalidParam('stop', '`stop` must be a string or an array of strings.');
  const kept = (list as string[]).filter((s) => s !== '');
  return kept.length > 0 ? kept : undefined;
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high';
const EFFORTS = new Set<string>(['none', 'minimal', 'low', 'medium', 'high']);

export function reasoningEffort(body: JsonObject): ReasoningEffort | undefined {
  const effort = body.reasoning_effort;
  if (effort === undefined || effort === null) return undefined;
  if (typeof effort !== 'string' || !EFFORTS.has(effort))
    throw invalidParam('reasoning_effort', '`reasoning_effort` must be one of none, minimal, low, medium, high.');
  return effort as ReasoningEffort;
}

/** The text of a system, developer or tool message: a string, or text parts joined. */
export function textContent(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(param, `\`${param}\` must be a string or an array of text parts.`);
  return content
    .map((part, j) => {
      if (typeof part === 'string') return part;
      if (isObject(part) && (part.type === 'text' || part.type === 'refusal')) {
        const text = part.type === 'text' ? part.text : part.refusal;
        if (typeof text === 'string') return text;
      }
      throw invalidParam(`${param}[${j}]`, `\`${param}[${j}]\` must be a text part here.`);
    })
    .join('');
}

/**
 * A user content part, neutral: text, an image (inline bytes or a URL) or a PDF/file. `cacheControl`
 * is a part's `cache_control` (the OpenRouter convention for asking Anthropic to cache a prefix).
 */
export type ContentPart = (
  { kind: 'text'; text: string } | { kind: 'inline'; mediaType: string; data: string; what: 'image' | 'file' } | { kind: 'url'; url: string; what: 'image' }
) & { cacheControl?: JsonObject };

/**
 * The parts of a user message. Audio input is refused (neither upstream takes OpenAI's
 * input_audio in our mapping), as are uploaded-file ids (they live in OpenAI's storage).
 */
export function contentParts(content: unknown, param: string, model: ModelInfo): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) throw invalidParam(param, `\`${param}\` must be a string or an array of content parts.`);
  return content.map((part, j): ContentPart => {
    const converted = contentPart(part, `${param}[${j}]`, model);
    if (isObject(part) && isObject(part.cache_control)) converted.cacheControl = part.cache_control;
    return converted;
  });
}

function contentPart(part: unknown, at: string, model: ModelInfo): ContentPart {
  if (typeof part === 'string') return { kind: 'text', text: part };
  if (!isObject(part)) throw invalidParam(at, `\`${at}\` must be a content part object.`);
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') throw invalidParam(`${at}.text`, `\`${at}.text\` must be a string.`);
      return { kind: 'text', text: part.text };
    case 'refusal':
      return { kind: 'text', text: typeof part.refusal === 'string' ? part.refusal : '' };
    case 'image_url': {
      const image = part.image_url;
      const url = isObject(image) ? image.url : image;
      if (typeof url !== 'string') throw invalidParam(`${at}.image_url.url`, `\`${at}.image_url.url\` must be a string.`);
      return imagePart(url, `${at}.image_url.url`);
    }
    case 'input_audio':
      throw unsupported(at, model, 'audio input (input_audio parts) cannot be sent to this model');
    case 'file': {
      const file = isObject(part.file) ? part.file : {};
      if (typeof file.file_data !== 'string')
        throw unsupported(`${at}.file`, model, 'send the file inline as `file_data` (a base64 data URL); uploaded file ids are not available');
      const inline = parseDataUrl(file.file_data);
      if (!inline) throw invalidParam(`${at}.file.file_data`, `\`${at}.file.file_data\` must be a base64 data URL (data:<type>;base64,...).`);
      return { kind: 'inline', mediaType: inline.mediaType, data: inline.data, what: 'file' };
    }
    default:
      throw invalidParam(`${at}.type`, `\`${at}.type\` ${JSON.stringify(part.type)} is not a supported content part type.`);
  }
}

function imagePart(url: string, param: string): ContentPart {
  if (url.startsWith('data:')) {
    const inline = parseDataUrl(url);
    if (!inline) throw invalidParam(param, `\`${param}\` must be a base64 data URL (data:image/png;base64,...) or an http(s) URL.`);
    return { kind: 'inline', mediaType: inline.mediaType, data: inline.data, what: 'image' };
  }
  if (/^https?:\/\//i.test(url)) return { kind: 'url', url, what: 'image' };
  throw invalidParam(param, `\`${param}\` must be a base64 data URL or an http(s) URL.`);
}

/** `data:<media type>[;params];base64,<data>`; null for anything else (URL-encoded data URLs included). */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) return null;
  const meta = url.slice(5, comma).split(';');
  if (meta[meta.length - 1]?.toLowerCase() !== 'base64') return null;
  const mediaType = meta[0]?.trim().toLowerCase();
  if (!mediaType || !mediaType.includes('/')) return null;
  return { mediaType, data: url.slice(comma + 1) };
}

/** An assistant tool call from the client's history, its arguments parsed. */
export interface HistoryToolCall {
  id: string;
  name: string;
  args: JsonObject;
  /** The tool call object as the client sent it back (for upstream-specific extras). */
  raw: JsonObject;
}

export function historyToolCalls(message: JsonObject, param: string): HistoryToolCall[] {
  const calls = message.tool_calls;
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) throw invalidParam(`${param}.tool_calls`, `\`${param}.tool_calls\` must be an array.`);
  return calls.map((call, k) => {
    const at = `${param}.tool_calls[${k}]`;
    const fn = isObject(call) ? call.function : undefined;
    if (!isObject(call) || !isObject(fn) || typeof fn.name !== 'string')
      throw invalidParam(at, `\`${at}\` must be {id, type: "function", function: {name, arguments}}.`);
    if (typeof call.id !== 'string' || call.id === '') throw invalidParam(`${at}.id`, `\`${at}.id\` must be a non-empty string.`);
    return { id: call.id, name: fn.name, args: parseArguments(fn.arguments, `${at}.function.arguments`), raw: call };
  });
}

/** Tool-call arguments: a JSON object in a string (an empty string is no arguments). */
function parseArguments(args: unknown, param: string): JsonObject {
  if (args === undefined || args === null || args === '') return {};
  if (isObject(args)) return args;
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isObject(parsed)) return parsed;
    } catch {
      // fall through to the 400
    }
  }
  throw invalidParam(param, `\`${param}\` must be a JSON object encoded as a string.`);
}

export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: JsonObject;
}

/** The client's function tools; other tool types (custom, built-in) cannot be carried. */
export function functionTools(body: JsonObject, model: ModelInfo): FunctionTool[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalidParam('tools', '`tools` must be an array.');
  return tools.map((tool, i) => {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(at, `\`${at}\` must be an object.`);
    if (tool.type !== 'function') throw unsupported(`${at}.type`, model, `only function tools can be sent to this model, not ${JSON.stringify(tool.type)}`);
    const fn = tool.function;
    if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '')
      throw invalidParam(`${at}.function.name`, `\`${at}.function.name\` must be a non-empty string.`);
    if (fn.parameters !== undefined && fn.parameters !== null && !isObject(fn.parameters))
      throw invalidParam(`${at}.function.parameters`, `\`${at}.function.parameters\` must be a JSON Schema object.`);
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' && fn.description !== '' ? { description: fn.description } : {}),
      ...(isObject(fn.parameters) ? { parameters: fn.parameters } : {}),
    };
  });
}

export type ToolChoice = { mode: 'auto' } | { mode: 'none' } | { mode: 'required' } | { mode: 'named'; name: string };

/** `tool_choice`, or undefined when absent (the upstream's default, which is auto for both). */
export function toolChoice(body: JsonObject): ToolChoice | undefined {
  const choice = body.tool_choice;
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { mode: choice };
  if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') {
    return { mode: 'named', name: choice.function.name };
  }
  throw invalidParam('tool_choice', '`tool_choice` must be "auto", "none", "required" or {type: "function", function: {name}}.');
}

export type ResponseFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name?: string; schema?: JsonObject };

export function responseFormat(body: JsonObject): ResponseFormat | undefined {
  const format = body.response_format;
  if (format === undefined || format === null) return undefined;
  if (!isObject(format)) throw invalidParam('response_format', '`response_format` must be an object.');
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type === 'json_schema') {
    const spec = isObject(format.json_schema) ? format.json_schema : {};
    return {
      type: 'json_schema',
      ...(typeof spec.name === 'string' ? { name: spec.name } : {}),
      ...(isObject(spec.schema) ? { schema: spec.schema } : {}),
    };
  }
  throw invalidParam('response_format.type', '`response_format.type` must be "text", "json_object" or "json_schema".');
}

/** The client asked for the usage chunk at the end of its stream. */
export function wantsStreamUsage(req: ClientRequest): boolean {
  const options = req.body.json.stream_options;
  return isObject(options) && options.include_usage === true;
}

// ---------------------------------------------------------------------------------------------
// Writing the client's reply

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export const completionId = (call: CallInfo): string => `chatcmpl-${call.requestId}`;

/** A cost text as a bare JSON number; anything not shaped like one is a bug upstream of us, written as 0. */
function jsonNumber(text: string): string {
  return /^-?\d+(?:\.\d+)?$/.test(text) ? text : '0';
}

/**
 * The usage the client sees: the settled usage, its prompt count including the cached tokens; the
 * audio shares (OpenAI's `audio_tokens` details) when an upstream reported any.
 */
export function clientUsage(settled: Settlement): OpenAIChat.ChatUsage {
  const u = settled.usage;
  const prompt = u.promptTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const promptDetails: NonNullable<OpenAIChat.ChatUsage['prompt_tokens_details']> = { cached_tokens: u.cacheReadTokens };
  const completionDetails: NonNullable<OpenAIChat.ChatUsage['completion_tokens_details']> = { reasoning_tokens: u.reasoningTokens };
  if (u.audioInputTokens) promptDetails.audio_tokens = u.audioInputTokens;
  if (u.audioOutputTokens) completionDetails.audio_tokens = u.audioOutputTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.completionTokens,
    total_tokens: prompt + u.completionTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: completionDetails,
  };
}

/** One tool call of a whole reply. `extra` carries upstream-specific members (Gemini's thought signature). */
export interface ReplyToolCall {
  id: string;
  name: string;
  arguments: string;
  extra?: JsonObject;
}

export interface ReplyMessage {
  /** null when the reply holds only tool calls (or nothing). */
  content: string | null;
  reasoning: string;
  toolCalls: ReplyToolCall[];
  /** Anthropic's thinking blocks with their signatures (`thinking_blocks`, the LiteLLM convention). */
  thinkingBlocks?: JsonObject[];
}

/** The chat.completion body, with our `service` member (cost as a bare JSON number). */
export function renderCompletion(call: CallInfo, message: ReplyMessage, finish: FinishReason, settled: Settlement): string {
  const msg: OpenAIChat.ChatMessage = { role: 'assistant', content: message.content, refusal: null };
  if (message.reasoning) msg.reasoning_content = message.reasoning;
  if (message.thinkingBlocks?.length) msg.thinking_blocks = message.thinkingBlocks;
  if (message.toolCalls.length > 0) {
    msg.tool_calls = message.toolCalls.map((t): OpenAIChat.ChatToolCall => ({
      id: t.id,
      type: 'function',
      function: { name: t.name, arguments: t.arguments },
      ...t.extra,
    }));
  }
  const body = JSON.stringify({
    id: completionId(call),
    object: 'chat.completion',
    created: call.created,
    model: call.model.name,
    choices: [{ index: 0, message: msg, logprobs: null, finish_reason: finish }],
    usage: clientUsage(settled),
  });
  return `${body.slice(0, -1)},"service":${serviceMember(settled)}}`;
}

/** Our `service` member of a chat.completion (and of an embeddings list): the cost as a bare JSON number. */
export function serviceMember(settled: Settlement): string {
  return `{"channel":${JSON.stringify(settled.channel)},"latency_ms":${Math.max(0, Math.round(settled.latencyMs))},"cost_usd":${jsonNumber(settled.costUsd)}}`;
}

/** The text a chat.completion.chunk starts with, up to its `choices` member. */
export function chunkHead(id: string, created: number, model: string): string {
  return `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":`;
}

/** A stream's closing usage chunk (costs as bare JSON numbers), then [DONE]; [DONE] alone when the client did not ask for usage. */
export function streamEnd(head: string, settled: Settlement, withUsage: boolean): string {
  if (!withUsage) return 'data: [DONE]\n\n';
  const usage = JSON.stringify(clientUsage(settled));
  const costs = `,"cost_usd":${jsonNumber(settled.costUsd)},"cost_cny":${jsonNumber(settled.costCny)}}`;
  return `data: ${head}[],"usage":${usage.slice(0, -1)}${costs}}\n\ndata: [DONE]\n\n`;
}

/**
 * The chat.completion.chunk events of one streamed choice. Tool calls are numbered 0.. in the
 * order they start, whatever the upstream numbers (Anthropic's block indices count text and
 * thinking blocks too). The first chunk (the assistant's role) goes out with the first content or
 * the finish, not before: until then nothing has reached the client, so an upstream that fails
 * right after its preamble (Anthropic's overloaded error after message_start) can still be
 * replaced by another channel.
 */
export class ChunkWriter {
  private readonly head: string;
  private toolCount = 0;
  private started = false;

  constructor(call: CallInfo) {
    this.head = chunkHead(completionId(call), call.created, call.model.name);
  }

  private chunk(delta: OpenAIChat.ChatCompletionChunk['choices'][number]['delta'], finish: FinishReason | null = null): string {
    return `data: ${this.head}${JSON.stringify([{ index: 0, delta, logprobs: null, finish_reason: finish }])}}\n\n`;
  }

  /** The first chunk, the assistant's role with empty content, if it has not gone yet. */
  private opening(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  content(text: string): string {
    return text ? this.opening() + this.chunk({ content: text }) : '';
  }

  /** Thinking, as `reasoning_content` (the DeepSeek convention most OpenAI clients read). */
  reasoning(text: string): string {
    return text ? this.opening() + this.chunk({ reasoning_content: text }) : '';
  }

  /** A complete signed thinking block (its text went as reasoning_content already). */
  thinkingBlock(block: JsonObject): string {
    return this.opening() + this.chunk({ thinking_blocks: [block] });
  }

  /** A tool call's first delta; returns its OpenAI index for the argument fragments that follow. */
  toolCallStart(id: string, name: string, extra?: JsonObject): { index: number; out: string } {
    const index = this.toolCount++;
    const out = this.opening() + this.chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' }, ...extra }] });
    return { index, out };
  }

  toolCallArguments(index: number, fragment: string): string {
    return fragment ? this.chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }) : '';
  }

  get toolCalls(): number {
    return this.toolCount;
  }

  finish(reason: FinishReason): string {
    return this.opening() + this.chunk({}, reason);
  }

  /** The end of the stream: the usage chunk (when the client asked for it), then [DONE]. */
  end(settled: Settlement, withUsage: boolean): string {
    return streamEnd(this.head, settled, withUsage);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit',
};

/**
 * An upstream's 4xx in OpenAI's envelope, the status kept (the SDKs pick their exception class
 * from it). `code` is the upstream's own error kind (e.g. Anthropic's "invalid_request_error",
 * Gemini's "invalid_argument") so nothing of the reason is lost.
 */
export function openaiError(status: number, message: string, code: string | null, param: string | null = null): TranslatedError {
  const type = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'upstream_error' : 'invalid_request_error');
  return { status, body: JSON.stringify({ error: { message, type, param, code } } satisfies OpenAIChat.ChatErrorBody) };
}

/** The text of an upstream error body that is not JSON: shortened, for the message. */
export function errorSnippet(text: string, status: number): string {
  const trimmed = text.trim();
  return trimmed ? `The upstream answered ${status}: ${trimmed.slice(0, 500)}` : `The upstream answered ${status}.`;
}

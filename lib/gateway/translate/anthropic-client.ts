// What the Anthropic Messages surface needs from every translator whose upstream is not Anthropic:
// readers of the client's request (the same checks and refusals whatever the upstream) and the
// writers of the client's reply (message object, stream events with contiguous block indices,
// stop reasons, the error envelope).
import type { Anthropic } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { createHash } from 'node:crypto';
import type { ModelInfo } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import type { JsonObject } from '@/lib/gateway/body';
import { DropRecord } from './dropped';
import type { CallInfo, Settlement, TranslatedError } from './types';

/** A content block of a client's message, as received: read field by field. */
export type ClientBlock = Received<Anthropic.ContentBlock>;

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

// ---------------------------------------------------------------------------------------------
// Request readers

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

/** A 400 for what the upstream of `model` cannot carry, named so the caller can drop it. */
export function notSupported(param: string, model: ModelInfo, why: string): GatewayError {
  return invalid(param, `${param} is not supported by ${model.name}: ${why}`);
}

/** A content block list, a bare string being one text block. */
export function blocksOf(content: unknown, param: string): ClientBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(param, `${param}: must be a string or an array of content blocks.`);
  return content.map((b, i) => {
    if (!isObject(b) || typeof b.type !== 'string') throw invalid(`${param}.${i}`, `${param}.${i}: must be a content block object with a type.`);
    return b;
  });
}

export function textOfBlock(b: ClientBlock, param: string): string {
  if (typeof b.text !== 'string') throw invalid(`${param}.text`, `${param}.text: must be a string.`);
  return b.text;
}

/** The system prompt as its text blocks (cache_control markers dropped: no equivalent upstream). */
export function systemTexts(body: JsonObject): string[] {
  const system = body.system;
  if (system === undefined || system === null) return [];
  return blocksOf(system, 'system').map((b, i) => {
    if (b.type !== 'text') throw invalid(`system.${i}.type`, `system.${i}.type: the system prompt takes text blocks only.`);
    return textOfBlock(b, `system.${i}`);
  });
}

export interface AnthropicTurn {
  /** `system`: a system-role message inside `messages` (Claude Code puts its environment block so for models it does not know). */
  role: 'user' | 'assistant' | 'system';
  blocks: ClientBlock[];
  /** messages.N, for the names in errors */
  param: string;
}

/** The text of a system-role message (a string or text blocks). */
export function systemTurnText(turn: AnthropicTurn): string {
  return turn.blocks
    .map((b, j) => {
      if (b.type !== 'text') throw invalid(`${turn.param}.content.${j}.type`, `${turn.param}.content.${j}.type: a system message takes text blocks only.`);
      return textOfBlock(b, `${turn.param}.content.${j}`);
    })
    .join('\n\n');
}

const hasToolUse = (t: AnthropicTurn) => t.role === 'assistant' && t.blocks.some((b) => b.type === 'tool_use');
const hasToolResult = (t: AnthropicTurn) => t.role === 'user' && t.blocks.some((b) => b.type === 'tool_result');

/**
 * The turns in order. A system message between an assistant's tool calls and the user turn with
 * their results moves to after that turn: every upstream wants the results right after the calls.
 */
export function turnsOf(body: JsonObject, drops?: DropRecord): AnthropicTurn[] {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'messages: must be a non-empty array of messages.');
  const turns: AnthropicTurn[] = messages.map((m, i) => {
    const param = `messages.${i}`;
    if (!isObject(m)) throw invalid(param, `${param}: must be an object.`);
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system')
      throw invalid(`${param}.role`, `${param}.role: must be "user", "assistant" or "system".`);
    let blocks = blocksOf(m.content, `${param}.content`);
    if (drops && blocks.some(isToolSearchBlock)) {
      for (const b of blocks) if (isToolSearchBlock(b)) drops.add(String(b.type));
      blocks = blocks.filter((b) => !isToolSearchBlock(b));
    }
    return { role: m.role, blocks, param };
  });
  for (let i = 1; i < turns.length; i++) {
    if (turns[i].role !== 'system' || !hasToolUse(turns[i - 1])) continue;
    let j = i;
    while (j < turns.length && turns[j].role === 'system') j++;
    if (j < turns.length && hasToolResult(turns[j])) {
      const moved = turns.splice(i, j - i);
      turns.splice(i + 1, 0, ...moved);
      i += moved.length;
    }
  }
  return turns;
}

/** How many turns open the conversation as system messages (those join the system prompt; later ones stay in place). */
export function leadingSystemTurns(turns: AnthropicTurn[]): number {
  let n = 0;
  while (n < turns.length && turns[n].role === 'system') n++;
  return n;
}

export type ImageRef = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };

/** An image block's source: inline base64 or a URL (a Files API id has no meaning elsewhere). */
export function imageOf(b: ClientBlock, param: string, model: ModelInfo): ImageRef {
  const src = b.source;
  if (!isObject(src)) throw invalid(`${param}.source`, `${param}.source: required.`);
  if (src.type === 'base64') {
    if (typeof src.media_type !== 'string' || typeof src.data !== 'string') {
      throw invalid(`${param}.source`, `${param}.source: a base64 source needs media_type and data strings.`);
    }
    return { kind: 'base64', mediaType: src.media_type, data: src.data };
  }
  if (src.type === 'url') {
    if (typeof src.url !== 'string') throw invalid(`${param}.source.url`, `${param}.source.url: must be a string.`);
    return { kind: 'url', url: src.url };
  }
  throw notSupported(
    `${param}.source.type`,
    model,
    `an image source of type "${String(src.type)}" exists only on Anthropic's platform; send base64 data or a URL.`,
  );
}

export type DocumentRef = { kind: 'pdf'; data: string; title?: string } | { kind: 'text'; text: string };

/** A document block: inline PDF or plain text. Citations and remote or uploaded files are refused. */
export function documentOf(b: ClientBlock, param: string, model: ModelInfo): DocumentRef {
  if (isObject(b.citations) && b.citations.enabled === true) {
    throw notSupported(`${param}.citations`, model, 'citations are an Anthropic feature.');
  }
  const src = b.source;
  if (!isObject(src)) throw invalid(`${param}.source`, `${param}.source: required.`);
  const title = typeof b.title === 'string' ? b.title : undefined;
  if (src.type === 'base64' && src.media_type === 'application/pdf' && typeof src.data === 'string') return { kind: 'pdf', data: src.data, title };
  if (src.type === 'text' && typeof src.data === 'string') return { kind: 'text', text: src.data };
  if (src.type === 'content') {
    const texts = blocksOf(src.content, `${param}.source.content`).map((c, i) => {
      if (c.type !== 'text') throw notSupported(`${param}.source.content.${i}.type`, model, 'document content other than text cannot be carried.');
      return textOfBlock(c, `${param}.source.content.${i}`);
    });
    return { kind: 'text', text: texts.join('\n') };
  }
  throw notSupported(
    `${param}.source.type`,
    model,
    `a document source of type "${String(src.type)}" cannot be carried; send the PDF as base64 or the text itself.`,
  );
}

export interface ToolResultParts {
  toolUseId: string;
  texts: string[];
  images: ImageRef[];
  isError: boolean;
}

/** A tool_result block: its text pieces and images (a string content is one text). */
export function toolResultOf(b: ClientBlock, param: string, model: ModelInfo): ToolResultParts {
  if (typeof b.tool_use_id !== 'string') throw invalid(`${param}.tool_use_id`, `${param}.tool_use_id: must be a string.`);
  const out: ToolResultParts = { toolUseId: b.tool_use_id, texts: [], images: [], isError: b.is_error === true };
  if (b.content === undefined || b.content === null) return out;
  blocksOf(b.content, `${param}.content`).forEach((c, i) => {
    const p = `${param}.content.${i}`;
    if (c.type === 'text') out.texts.push(textOfBlock(c, p));
    else if (c.type === 'image') out.images.push(imageOf(c, p, model));
    else if (c.type === 'document') {
      const doc = documentOf(c, p, model);
      if (doc.kind !== 'text') throw notSupported(`${p}.type`, model, 'a PDF inside a tool result cannot be carried.');
      out.texts.push(doc.text);
    } else if (c.type === 'tool_reference' && typeof c.tool_name === 'string') {
      // A tool search's answer (Claude Code's ToolSearch): the tool it names is already declared
      // to these upstreams (deferred tools go as ordinary ones), so the reference is said in words.
      out.texts.push(`Tool available: ${c.tool_name}`);
    } else throw notSupported(`${p}.type`, model, `a "${String(c.type)}" block inside a tool result cannot be carried.`);
  });
  return out;
}

export interface ToolUseParts {
  id: string;
  name: string;
  input: unknown;
}

export function toolUseOf(b: ClientBlock, param: string): ToolUseParts {
  if (typeof b.id !== 'string' || typeof b.name !== 'string') throw invalid(param, `${param}: a tool_use block needs id and name strings.`);
  return { id: b.id, name: b.name, input: b.input ?? {} };
}

/**
 * A block no other upstream can take: those only Anthropic's platform produces or runs (server
 * tools and their results, containers, MCP, search results), or a type unknown here.
 */
export function refuseBlock(b: ClientBlock, param: string, model: ModelInfo): never {
  throw notSupported(`${param}.type`, model, `"${String(b.type)}" content blocks cannot be carried outside Anthropic's platform.`);
}

export interface ToolDef {
  name: string;
  description?: string;
  schema: JsonObject;
  strict?: boolean;
}

/** Anthropic's tool-search server tools (`tool_search_tool_regex_20251119`, `…_bm25_…`). */
const TOOL_SEARCH = /^tool_search_tool_/;

/**
 * Custom tools; Anthropic-defined tools (web search, code execution, bash, computer use...) are
 * refused, except tool search, which is dropped (recorded in `drops`): it only finds tools marked
 * `defer_loading`, and those go to these upstreams as ordinary tools, callable without a search.
 */
export function toolsOf(body: JsonObject, model: ModelInfo, drops?: DropRecord): ToolDef[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid('tools', 'tools: must be an array.');
  const defs: ToolDef[] = [];
  tools.forEach((t, i) => {
    const param = `tools.${i}`;
    if (!isObject(t)) throw invalid(param, `${param}: must be an object.`);
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      if (typeof t.type === 'string' && TOOL_SEARCH.test(t.type) && drops) {
        drops.add(typeof t.name === 'string' && t.name !== '' ? t.name : t.type);
        return;
      }
      throw notSupported(
        `${param}.type`,
        model,
        `"${String(t.type)}" is a tool Anthropic defines and runs; only custom tools (name, description, input_schema) can be carried.`,
      );
    }
    if (typeof t.name !== 'string' || t.name === '') throw invalid(`${param}.name`, `${param}.name: must be a non-empty string.`);
    if (!isObject(t.input_schema)) throw invalid(`${param}.input_schema`, `${param}.input_schema: must be a JSON schema object.`);
    const def: ToolDef = { name: t.name, schema: t.input_schema };
    if (typeof t.description === 'string') def.description = t.description;
    if (typeof t.strict === 'boolean') def.strict = t.strict;
    defs.push(def);
  });
  return defs;
}

/** A tool_choice that forces a tool the request does not carry to this upstream (a dropped tool search): a 400. */
export function checkForcedTool(choice: ToolChoice | undefined, tools: ToolDef[], model: ModelInfo): void {
  if (choice?.mode === 'tool' && !tools.some((t) => t.name === choice.name)) {
    throw notSupported('tool_choice.name', model, `the tool "${String(choice.name)}" is not among the tools this model can run.`);
  }
}

/** History blocks of a tool search that ran on Anthropic's platform: dropped off it (the tools found are sent anyway). */
function isToolSearchBlock(b: ClientBlock): boolean {
  return b.type === 'tool_search_tool_result' || (b.type === 'server_tool_use' && typeof b.name === 'string' && TOOL_SEARCH.test(b.name));
}

export type ToolChoice = { mode: 'auto' | 'any' | 'none'; disableParallel: boolean } | { mode: 'tool'; name: string; disableParallel: boolean };

export function toolChoiceOf(body: JsonObject): ToolChoice | undefined {
  const tc = body.tool_choice;
  if (tc === undefined || tc === null) return undefined;
  if (!isObject(tc)) throw invalid('tool_choice', 'tool_choice: must be an object.');
  const disableParallel = tc.disable_parallel_tool_use === true;
  switch (tc.type) {
    case 'auto':
    case 'any':
    case 'none':
      return { mode: tc.type, disableParallel };
    case 'tool':
      if (typeof tc.name !== 'string' || tc.name === '') throw invalid('tool_choice.name', 'tool_choice.name: required with type "tool".');
      return { mode: 'tool', name: tc.name, disableParallel };
    default:
      throw invalid('tool_choice.type', 'tool_choice.type: must be one of "auto", "any", "tool", "none".');
  }
}

export type Effort = 'low' | 'medium' | 'high';

export interface ThinkingRequest {
  /** The client asked for thinking (enabled with a budget, or adaptive). */
  enabled: boolean;
  budgetTokens?: number;
  /** output_config.effort, folded onto the three levels other providers know (xhigh and max -> high). */
  effort?: Effort;
  /** `thinking.display: "omitted"`: the client wants no thinking text (Anthropic then sends only signatures). */
  omitText: boolean;
}

/**
 * Anthropic budgets to OpenAI-style effort levels: below 8,192 low, below 16,384 medium, else high.
 * Claude Code's budgets for "think" (4,000), "think hard" (10,000) and "ultrathink" (31,999) land
 * on the three levels in order.
 */
export function effortOfBudget(budget: number): Effort {
  if (budget < 8192) return 'low';
  if (budget < 16384) return 'medium';
  return 'high';
}

export function thinkingOf(body: JsonObject): ThinkingRequest {
  const out: ThinkingRequest = { enabled: false, omitText: false };
  const t = body.thinking;
  if (t !== undefined && t !== null) {
    if (!isObject(t)) throw invalid('thinking', 'thinking: must be an object.');
    if (t.display !== undefined && t.display !== null && t.display !== 'summarized' && t.display !== 'omitted')
      throw invalid('thinking.display', 'thinking.display: must be "summarized" or "omitted".');
    out.omitText = t.display === 'omitted';
    if (t.type === 'enabled') {
      const budget = t.budget_tokens;
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1) {
        throw invalid('thinking.budget_tokens', 'thinking.budget_tokens: must be a positive integer.');
      }
      out.enabled = true;
      out.budgetTokens = budget;
    } else if (t.type === 'adaptive') out.enabled = true;
    else if (t.type !== 'disabled') throw invalid('thinking.type', 'thinking.type: must be "enabled", "adaptive" or "disabled".');
  }
  const cfg = body.output_config;
  if (isObject(cfg) && cfg.effort !== undefined && cfg.effort !== null) {
    const e = cfg.effort;
    if (e === 'low' || e === 'medium' || e === 'high') out.effort = e;
    else if (e === 'xhigh' || e === 'max') out.effort = 'high';
    else throw invalid('output_config.effort', 'output_config.effort: must be one of low, medium, high, xhigh, max.');
  }
  return out;
}

/** The JSON schema of structured output (output_config.format, or the beta's top-level output_format). */
export function jsonFormatOf(body: JsonObject): JsonObject | undefined {
  const cfg = isObject(body.output_config) ? body.output_config : undefined;
  const fmt = cfg?.format ?? body.output_format;
  const param = cfg?.format !== undefined && cfg.format !== null ? 'output_config.format' : 'output_format';
  if (fmt === undefined || fmt === null) return undefined;
  if (!isObject(fmt) || fmt.type !== 'json_schema' || !isObject(fmt.schema)) {
    throw invalid(param, `${param}: must be {"type": "json_schema", "schema": {...}}.`);
  }
  return fmt.schema;
}

export function stopSequencesOf(body: JsonObject): string[] | undefined {
  const s = body.stop_sequences;
  if (s === undefined || s === null) return undefined;
  if (!Array.isArray(s) || !s.every((x) => typeof x === 'string')) throw invalid('stop_sequences', 'stop_sequences: must be an array of strings.');
  return s.length > 0 ? (s as string[]) : undefined;
}

export function numberOf(body: JsonObject, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, `${field}: must be a number.`);
  return v;
}

export function userIdOf(body: JsonObject): string | undefined {
  const m = body.metadata;
  return isObject(m) && typeof m.user_id === 'string' && m.user_id !== '' ? m.user_id : undefined;
}

/**
 * The client's max_tokens, lowered to the model's max_output_tokens (operator config): Claude
 * Code asks for 32,000 whatever the model, and an OpenAI model refuses more than it can write.
 */
export function maxTokensOf(body: JsonObject, model: ModelInfo): number | undefined {
  const v = body.max_tokens;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw invalid('max_tokens', 'max_tokens: must be a positive integer.');
  return Math.min(v, model.maxOutputTokens);
}

/** A stable stand-in for an end-user id too long for an upstream's field (SHA-256, hex, 64 characters). */
export function shortUserId(id: string, max: number): string {
  return id.length <= max ? id : createHash('sha256').update(id).digest('hex').slice(0, max);
}

/** Members that ask for Anthropic-run machinery (MCP connectors, code containers): refused. */
export function refusePlatformMembers(body: JsonObject, model: ModelInfo): void {
  for (const field of ['mcp_servers', 'container']) {
    const v = body[field];
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) {
      throw notSupported(field, model, `${field} runs on Anthropic's platform only.`);
    }
  }
}

/**
 * Members that only steer Anthropic's own server and cannot change what the model is asked on
 * another upstream: dropped, and recorded so (x-service-dropped). `context_management` clears old
 * thinking or tool results server-side; these upstreams keep no server-side context to clear.
 */
export function dropAnthropicOnly(body: JsonObject, drops: DropRecord): void {
  if (body.context_management !== undefined && body.context_management !== null) drops.add('context_management');
}

export function dataUrl(img: { mediaType: string; data: string }): string {
  return `data:${img.mediaType};base64,${img.data}`;
}

// ---------------------------------------------------------------------------------------------
// Reply writers

/** The message id of a request, the same in the stream and in a whole reply. */
export function messageId(call: CallInfo): string {
  return `msg_${call.requestId}`;
}

/** Tool-use id minted where the upstream gave none (Gemini never does). */
export function toolUseId(call: CallInfo, n: number): string {
  return `toolu_${call.requestId}_${n}`;
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  server_tool_use?: { web_search_requests: number };
}

/**
 * Settled usage in Anthropic's terms: input_tokens is the uncached prompt; cache writes split into
 * 5-minute and 1-hour ones when there were any, web searches billed in `server_tool_use`.
 */
export function anthropicUsage(u: Settlement['usage'], toolCalls?: Settlement['toolCalls']): AnthropicUsage {
  const usage: AnthropicUsage = {
    input_tokens: u.promptTokens,
    output_tokens: u.completionTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cacheReadTokens,
  };
  if (u.cacheWriteTokens > 0) {
    const hour = Math.min(u.cacheWrite1hTokens ?? 0, u.cacheWriteTokens);
    usage.cache_creation = { ephemeral_5m_input_tokens: u.cacheWriteTokens - hour, ephemeral_1h_input_tokens: hour };
  }
  if (toolCalls?.web_search) usage.server_tool_use = { web_search_requests: toolCalls.web_search };
  return usage;
}

/** A whole reply: `{id, type: "message", role, model, content, stop_reason, stop_sequence, usage}`. */
export function anthropicMessage(
  call: CallInfo,
  content: Anthropic.ContentBlock[],
  stopReason: StopReason,
  stopSequence: string | null,
  settled: Settlement,
): string {
  return JSON.stringify({
    id: messageId(call),
    type: 'message',
    role: 'assistant',
    model: call.model.name,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: anthropicUsage(settled.usage, settled.toolCalls),
  });
}

export function sseEvent(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

type BlockKind = 'text' | 'thinking' | 'tool_use';
type BlockDelta = Extract<Anthropic.MessagesStreamEvent, { type: 'content_block_delta' }>['delta'];

/**
 * Writes one message's events in the order the Anthropic SDK expects: message_start, then blocks
 * one at a time (indices contiguous from 0, each started block stopped before the next starts),
 * then message_delta and message_stop. Each method returns the bytes to send.
 */
export class AnthropicEventWriter {
  private started = false;
  private nextIndex = 0;
  private open: { index: number; kind: BlockKind } | null = null;

  constructor(private readonly call: CallInfo) {}

  /** message_start, once; usage counts are those known so far (usually none before the end). */
  start(usage: AnthropicUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }): string {
    if (this.started) return '';
    this.started = true;
    return sseEvent('message_start', {
      message: {
        id: messageId(this.call),
        type: 'message',
        role: 'assistant',
        model: this.call.model.name,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    });
  }

  get openKind(): BlockKind | null {
    return this.open?.kind ?? null;
  }

  /** Stops the open block (if any) and starts a new one; returns its index too. */
  block(contentBlock: Anthropic.ContentBlock & { type: BlockKind }): { bytes: string; index: number } {
    let bytes = this.start() + this.stop();
    const index = this.nextIndex++;
    this.open = { index, kind: contentBlock.type };
    bytes += sseEvent('content_block_start', { index, content_block: contentBlock });
    return { bytes, index };
  }

  /** A delta for the open block, or for `index` (a block already stopped: see the callers). */
  delta(delta: BlockDelta, index = this.open?.index): string {
    if (index === undefined) return '';
    return sseEvent('content_block_delta', { index, delta });
  }

  text(text: string): string {
    if (text === '') return '';
    const bytes = this.open?.kind === 'text' ? '' : this.block({ type: 'text', text: '' }).bytes;
    return bytes + this.delta({ type: 'text_delta', text });
  }

  thinking(text: string): string {
    if (text === '') return '';
    const bytes = this.open?.kind === 'thinking' ? '' : this.block({ type: 'thinking', thinking: '', signature: '' }).bytes;
    return bytes + this.delta({ type: 'thinking_delta', thinking: text });
  }

  /**
   * A signature closes a thinking block (as Anthropic sends it: signature_delta, then the stop);
   * with no thinking block open, it gets an empty one of its own.
   */
  signature(signature: string): string {
    const bytes = this.open?.kind === 'thinking' ? '' : this.block({ type: 'thinking', thinking: '', signature: '' }).bytes;
    return bytes + this.delta({ type: 'signature_delta', signature }) + this.stop();
  }

  stop(): string {
    if (!this.open) return '';
    const bytes = sseEvent('content_block_stop', { index: this.open.index });
    this.open = null;
    return bytes;
  }

  /** The end of the message: every block stopped, then message_delta (usage totals) and message_stop. */
  finish(stopReason: StopReason, stopSequence: string | null, usage: AnthropicUsage): string {
    return (
      this.start() +
      this.stop() +
      sseEvent('message_delta', { delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage }) +
      sseEvent('message_stop', {})
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Anthropic's error type for a status, as its SDK maps them to exception classes. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The message of an upstream's error body (`message` reads it from the parsed JSON), else its text, else its status. */
export function upstreamErrorText(status: number, text: string, message: (body: unknown) => string | undefined): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return message(parsed) ?? (text.trim().slice(0, 500) || `The upstream answered ${status}.`);
}

/** An upstream's 4xx in Anthropic's envelope, its status kept; `message` pulls the text out of the upstream's body. */
export function anthropicError(status: number, text: string, message: (body: unknown) => string | undefined): TranslatedError {
  const msg = upstreamErrorText(status, text, message);
  return { status, body: JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message: msg } } satisfies Anthropic.MessagesErrorBody) };
}

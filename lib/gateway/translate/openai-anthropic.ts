// OpenAI chat client -> Anthropic Messages upstream (POST {base}/v1/messages).
// The mapping choices (defaults, what is refused, thinking) are listed in docs/protocols.md
// (Unified protocols); the comments here say why where it is not obvious.
import type { Anthropic } from '@/lib/gateway/translate/wire';
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { takeAnthropicUsage } from '@/lib/gateway/translate/usage';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import {
  ChunkWriter,
  contentParts,
  errorSnippet,
  functionTools,
  historyToolCalls,
  invalidParam,
  maxOutputTokens,
  openaiError,
  reasoningEffort,
  refuseUnsupported,
  renderCompletion,
  responseFormat,
  stopSequences,
  textContent,
  toolChoice,
  wantsStreamUsage,
  type FinishReason,
  type ReplyToolCall,
  type ResponseFormat,
} from '@/lib/gateway/translate/openai-client';
import type {
  CallInfo,
  ClientRequest,
  JsonObject,
  Settlement,
  SseEvent,
  StreamTranslator,
  Translator,
  UpstreamCall,
  UpstreamUsage,
} from '@/lib/gateway/translate/types';
import { upstreamObject } from '@/lib/gateway/translate/upstream-json';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Thinking budgets for OpenAI's reasoning_effort. Anthropic's minimum is 1024 and the budget must
 * stay below max_tokens (which, as in OpenAI's reasoning models, bounds thinking plus answer).
 */
export const THINKING_BUDGETS = { low: 1024, medium: 4096, high: 16384 } as const;
const MIN_THINKING_BUDGET = 1024;

/** Said to the model for response_format json_object / json_schema: Anthropic has no JSON mode of its own. */
export const JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else: no prose before or after it, no Markdown code fences.';
export const jsonSchemaInstruction = (schema: JsonObject) =>
  `Respond with a single valid JSON value that conforms to this JSON Schema, and nothing else: no prose before or after it, no Markdown code fences.\nJSON Schema: ${JSON.stringify(schema)}`;

type Block = Anthropic.ContentBlock;

// ---------------------------------------------------------------------------------------------
// Request

function userBlocks(content: unknown, param: string, model: ModelInfo): string | Block[] {
  if (typeof content === 'string') return content;
  const blocks: Block[] = [];
  for (const part of contentParts(content, param, model)) {
    let block: Anthropic.TextBlock | Anthropic.ImageBlock;
    if (part.kind === 'text') {
      // Anthropic refuses empty text blocks.
      if (part.text === '') continue;
      block = { type: 'text', text: part.text };
    } else if (part.kind === 'url') {
      block = { type: 'image', source: { type: 'url', url: part.url } };
    } else {
      block = { type: part.what === 'image' ? 'image' : 'document', source: { type: 'base64', media_type: part.mediaType, data: part.data } };
    }
    if (part.cacheControl) block.cache_control = part.cacheControl;
    blocks.push(block);
  }
  return blocks;
}

/** A system or developer message as system text blocks: one per text part, its cache_control kept. */
function systemBlocks(content: unknown, param: string): Anthropic.TextBlock[] {
  const parts = Array.isArray(content) ? content : [content];
  const blocks: Anthropic.TextBlock[] = [];
  parts.forEach((part, j) => {
    const text = textContent(Array.isArray(content) ? [part] : part, Array.isArray(content) ? `${param}[${j}]` : param);
    if (text === '') return;
    const block: Anthropic.TextBlock = { type: 'text', text };
    if (isObject(part) && isObject(part.cache_control)) block.cache_control = part.cache_control;
    blocks.push(block);
  });
  return blocks;
}

interface Conversation {
  system: Anthropic.TextBlock[];
  messages: Anthropic.MessageParam[];
  /** The conversation ends with tool results answering the assistant's last tool calls. */
  inToolLoop: boolean;
}

function conversation(body: JsonObject, model: ModelInfo): Conversation {
  const list = body.messages;
  if (!Array.isArray(list) || list.length === 0) throw invalidParam('messages', '`messages` must be a non-empty array.');
  const system: Anthropic.TextBlock[] = [];
  const messages: Anthropic.MessageParam[] = [];
  // The user message collecting consecutive tool results (Anthropic wants them in one turn).
  let toolResults: Block[] | null = null;
  list.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw invalidParam(at, `\`${at}\` must be an object.`);
    const role = m.role;
    if (role !== 'tool') toolResults = null;
    switch (role) {
      case 'system':
      case 'developer': {
        // Anthropic has no system turns: every one joins the top-level system prompt, in order.
        system.push(...systemBlocks(m.content, `${at}.content`));
        break;
      }
      case 'user':
        messages.push({ role: 'user', content: userBlocks(m.content, `${at}.content`, model) });
        break;
      case 'assistant': {
        // Signed thinking the client kept (`thinking_blocks`, the LiteLLM convention; the Responses
        // surface restores it from its encrypted reasoning items) goes back first, as Anthropic wants.
        const blocks: Block[] = signedThinking(m.thinking_blocks);
        const text = textContent(m.content, `${at}.content`);
        if (text !== '') blocks.push({ type: 'text', text });
        for (const call of historyToolCalls(m, at)) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
        // An empty assistant turn carries nothing and Anthropic refuses empty content.
        if (blocks.length > 0) messages.push({ role: 'assistant', content: blocks });
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '')
          throw invalidParam(`${at}.tool_call_id`, `\`${at}.tool_call_id\` must be a non-empty string.`);
        const result: Anthropic.ToolResultBlock = { type: 'tool_result', tool_use_id: m.tool_call_id, content: textContent(m.content, `${at}.content`) };
        if (toolResults) toolResults.push(result);
        else {
          toolResults = [result];
          messages.push({ role: 'user', content: toolResults });
        }
        break;
      }
      default:
        throw invalidParam(
          `${at}.role`,
          `\`${at}.role\` ${JSON.stringify(role)} cannot be sent to ${model.name}: use system, developer, user, assistant or tool.`,
        );
    }
  });
  const last = list[list.length - 1];
  // A conversation of system messages only (which OpenAI answers) has no turn for Anthropic: it becomes the user's.
  if (messages.length === 0 && system.length > 0) return { system: [], messages: [{ role: 'user', content: system }], inToolLoop: false };
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  // With the signed thinking of the turn back, Anthropic lets the tool loop go on thinking.
  const signed = Array.isArray(lastAssistant?.content) && lastAssistant.content.some((b) => b.type === 'thinking');
  return { system, messages, inToolLoop: isObject(last) && last.role === 'tool' && !signed };
}

/** Thinking blocks a Claude model signed, as they came back; anything else is not Anthropic's to read. */
function signedThinking(blocks: unknown): Block[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.filter(
    (b): b is Anthropic.ThinkingBlock | Anthropic.RedactedThinkingBlock =>
      isObject(b) &&
      ((b.type === 'thinking' &&
        typeof b.thinking === 'string' &&
        typeof b.signature === 'string' &&
        b.signature !== '' &&
        !b.signature.startsWith('gemini:')) ||
        (b.type === 'redacted_thinking' && typeof b.data === 'string')),
  );
}

function thinkingBudget(body: JsonObject, maxTokens: number, conv: Conversation, forcedTool: boolean): number | undefined {
  const effort = reasoningEffort(body);
  if (effort === undefined || effort === 'none' || effort === 'minimal') return undefined;
  // Anthropic refuses thinking with a forced tool, and, mid tool loop, wants the signed thinking
  // block of the assistant's last turn back, which an OpenAI client never held: answer without.
  if (forcedTool || conv.inToolLoop) return undefined;
  const budget = Math.min(THINKING_BUDGETS[effort], maxTokens - 1);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

function formatInstruction(format: ResponseFormat | undefined): string | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_schema' && format.schema) return jsonSchemaInstruction(format.schema);
  return JSON_OBJECT_INSTRUCTION;
}

function buildRequest(req: ClientRequest, call: CallInfo): Anthropic.MessagesRequest {
  const body = req.body.json;
  const model = call.model;
  refuseUnsupported(body, model);
  const maxTokens = maxOutputTokens(body, model);
  const conv = conversation(body, model);

  const instruction = formatInstruction(responseFormat(body));
  if (instruction) conv.system.push({ type: 'text', text: instruction });
  const out: Anthropic.MessagesRequest = {
    model: model.name,
    max_tokens: maxTokens,
    ...(conv.system.length > 0 ? { system: conv.system } : {}),
    messages: conv.messages,
  };

  const tools = functionTools(body, model);
  const choice = toolChoice(body);
  let forcedTool = false;
  if (tools.length > 0) {
    out.tools = tools.map((t) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      input_schema: t.parameters ?? { type: 'object', properties: {} },
    }));
    const noParallel = body.parallel_tool_calls === false;
    let mapped: Anthropic.MessagesRequest['tool_choice'];
    if (choice?.mode === 'none') mapped = { type: 'none' };
    else if (choice?.mode === 'required') mapped = { type: 'any' };
    else if (choice?.mode === 'named') mapped = { type: 'tool', name: choice.name };
    else if (choice?.mode === 'auto' || noParallel) mapped = { type: 'auto' };
    if (mapped && noParallel && mapped.type !== 'none') mapped.disable_parallel_tool_use = true;
    if (mapped) out.tool_choice = mapped;
    forcedTool = choice?.mode === 'required' || choice?.mode === 'named';
  }

  const stop = stopSequences(body);
  if (stop) out.stop_sequences = stop;

  const budget = thinkingBudget(body, maxTokens, conv, forcedTool);
  if (budget !== undefined) {
    // With thinking on Anthropic accepts no temperature other than 1 and top_p only from 0.95:
    // the sampling knobs are left out rather than refused.
    out.thinking = { type: 'enabled', budget_tokens: budget };
  } else {
    // Anthropic's temperature range is 0..1, OpenAI's 0..2: clamped to the upstream's top.
    if (typeof body.temperature === 'number') out.temperature = Math.min(1, Math.max(0, body.temperature));
    // Recent Claude models refuse temperature and top_p together; many clients send both by
    // default, so top_p goes only when it is the one knob set.
    else if (typeof body.top_p === 'number') out.top_p = body.top_p;
  }

  const user =
    typeof body.user === 'string' && body.user !== ''
      ? body.user
      : typeof body.safety_identifier === 'string' && body.safety_identifier !== ''
        ? body.safety_identifier
        : undefined;
  if (user !== undefined) out.metadata = { user_id: user };
  if (call.stream) out.stream = true;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replies

function finishReason(stopReason: unknown, toolCalls: number): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      // A finish_reason of tool_calls with no tool call breaks clients' tool loops.
      return toolCalls > 0 ? 'tool_calls' : 'stop';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** A Messages reply or stream event as received. */
const parseJson = (text: string, what: string) => upstreamObject<Anthropic.Message | Anthropic.MessagesStreamEvent>(text, what);

const STREAM_ERROR_STATUS: Record<string, number> = { overloaded_error: 529, api_error: 500, rate_limit_error: 429 };

function streamError(data: JsonObject): UpstreamFailure {
  const err = isObject(data.error) ? data.error : {};
  const type = typeof err.type === 'string' ? err.type : 'error';
  const message = typeof err.message === 'string' ? err.message : '';
  return new UpstreamFailure('status', `upstream stream error: ${type}${message ? `: ${message.slice(0, 200)}` : ''}`, STREAM_ERROR_STATUS[type]);
}

function response(text: string, call: CallInfo) {
  const msg = parseJson(text, 'the reply');
  if (msg.type === 'error') throw streamError(msg);
  if (!Array.isArray(msg.content)) throw new UpstreamFailure('protocol', 'upstream reply has no content');
  let content = '';
  let reasoning = '';
  let sawText = false;
  const toolCalls: ReplyToolCall[] = [];
  const thinkingBlocks: JsonObject[] = [];
  for (const block of msg.content) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      content += block.text;
      sawText = true;
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
      thinkingBlocks.push({ type: 'thinking', thinking: block.thinking, signature: typeof block.signature === 'string' ? block.signature : '' });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use' && typeof block.name === 'string') {
      toolCalls.push({
        id: typeof block.id === 'string' ? block.id : `call_${call.requestId}_${toolCalls.length}`,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
      });
    }
  }
  const finish = finishReason(msg.stop_reason, toolCalls.length);
  const message = { content: sawText || toolCalls.length === 0 ? content : null, reasoning, toolCalls, thinkingBlocks };
  return {
    usage: takeAnthropicUsage(null, msg.usage, true),
    completion: reasoning + content + toolCalls.map((t) => t.arguments).join(''),
    render: (settled: Settlement) => renderCompletion(call, message, finish, settled),
  };
}

class AnthropicStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: ChunkWriter;
  private readonly withUsage: boolean;
  private finishSent = false;
  /** Anthropic block index -> OpenAI tool call index, and whether any argument text was sent for it. */
  private readonly toolIndex = new Map<number, { index: number; args: boolean }>();
  /** Anthropic block index -> the thinking block being streamed (its text and signature). */
  private readonly thinking = new Map<number, { type: string; thinking?: string; signature?: string; data?: unknown }>();

  constructor(call: CallInfo, req: ClientRequest) {
    this.out = new ChunkWriter(call);
    this.withUsage = wantsStreamUsage(req);
  }

  push(ev: SseEvent): string {
    if (ev.data === '') return '';
    const data = parseJson(ev.data, 'the stream');
    const type = typeof data.type === 'string' ? data.type : ev.event;
    switch (type) {
      case 'message_start': {
        const message = isObject(data.message) ? data.message : {};
        this.usage = takeAnthropicUsage(this.usage, message.usage, false);
        return '';
      }
      case 'content_block_start': {
        const block = isObject(data.content_block) ? data.content_block : {};
        let out = '';
        if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string' && typeof data.index === 'number') {
          const started = this.out.toolCallStart(block.id, block.name);
          this.toolIndex.set(data.index, { index: started.index, args: false });
          out += started.out;
        } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          this.completion += block.text;
          out += this.out.content(block.text);
        } else if ((block.type === 'thinking' || block.type === 'redacted_thinking') && typeof data.index === 'number') {
          this.thinking.set(
            data.index,
            block.type === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'redacted_thinking', data: block.data },
          );
        }
        return out;
      }
      case 'content_block_delta': {
        const delta = isObject(data.delta) ? data.delta : {};
        let out = '';
        if (delta.type === 'text_delta' && typeof delta.text === 'string') {
          this.completion += delta.text;
          out += this.out.content(delta.text);
        } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
          this.completion += delta.thinking;
          const block = typeof data.index === 'number' ? this.thinking.get(data.index) : undefined;
          if (block) block.thinking += delta.thinking;
          out += this.out.reasoning(delta.thinking);
        } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
          const block = typeof data.index === 'number' ? this.thinking.get(data.index) : undefined;
          if (block) block.signature += delta.signature;
        } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          // Input of a block that is no client tool call (a server tool's) has no place in the reply.
          const tool = typeof data.index === 'number' ? this.toolIndex.get(data.index) : undefined;
          if (tool === undefined) return out;
          if (delta.partial_json !== '') tool.args = true;
          this.completion += delta.partial_json;
          out += this.out.toolCallArguments(tool.index, delta.partial_json);
        }
        // citations_delta has no place in OpenAI's chunks.
        return out;
      }
      case 'content_block_stop': {
        const thinking = typeof data.index === 'number' ? this.thinking.get(data.index) : undefined;
        // The whole signed block once it is complete (`thinking_blocks`, as LiteLLM streams it).
        if (thinking) return this.out.thinkingBlock(thinking);
        // A call without arguments streams none: clients parse "{}", never "".
        const tool = typeof data.index === 'number' ? this.toolIndex.get(data.index) : undefined;
        if (!tool || tool.args) return '';
        tool.args = true;
        this.completion += '{}';
        return this.out.toolCallArguments(tool.index, '{}');
      }
      case 'message_delta': {
        // Cumulative counts; newer API versions repeat the input and cache counts here too.
        this.usage = takeAnthropicUsage(this.usage, data.usage, true);
        const delta = isObject(data.delta) ? data.delta : {};
        if (delta.stop_reason === undefined || delta.stop_reason === null || this.finishSent) return '';
        this.finishSent = true;
        return this.out.finish(finishReason(delta.stop_reason, this.out.toolCalls));
      }
      case 'message_stop': {
        this.finished = true;
        if (this.usage) this.usage = { ...this.usage, completionFinal: true };
        if (this.finishSent) return '';
        this.finishSent = true;
        return this.out.finish(finishReason(this.out.toolCalls > 0 ? 'tool_use' : undefined, this.out.toolCalls));
      }
      case 'error':
        throw streamError(data);
      default:
        // ping, and event types added later.
        return '';
    }
  }

  end(settled: Settlement): string {
    return this.out.end(settled, this.withUsage);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

function error(status: number, text: string) {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && isObject(parsed.error) && typeof parsed.error.message === 'string') {
      return openaiError(status, parsed.error.message, typeof parsed.error.type === 'string' ? parsed.error.type : null);
    }
  } catch {
    // not JSON: quoted below
  }
  return openaiError(status, errorSnippet(text, status), null);
}

export const openaiToAnthropic: Translator = {
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    return { body: JSON.stringify(buildRequest(req, call)), headers: { 'anthropic-version': ANTHROPIC_VERSION } };
  },
  response,
  stream: (call, req) => new AnthropicStream(call, req),
  error,
};

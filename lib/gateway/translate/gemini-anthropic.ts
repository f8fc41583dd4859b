// Gemini client -> Anthropic Messages upstream (google-genai or Gemini CLI reaching a Claude
// model). The mapping choices are listed in docs/protocols.md ("Gemini clients"); the comments
// here say why where it is not obvious.
import type { Anthropic } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { takeAnthropicUsage } from '@/lib/gateway/translate/usage';
import { ANTHROPIC_VERSION, JSON_OBJECT_INSTRUCTION, jsonSchemaInstruction } from '@/lib/gateway/translate/openai-anthropic';
import {
  CallIds,
  GeminiChunkWriter,
  callableFunctions,
  droppedMembers,
  droppedOf,
  effortOf,
  functionCallPart,
  functionCallingOf,
  generationConfigOf,
  geminiError,
  geminiResponse,
  isThought,
  mediaOf,
  nestedMessage,
  notSupported,
  openThinking,
  parseArgs,
  refusePart,
  responseText,
  sealThinking,
  systemTextOf,
  toolsOf,
  turnsOf,
  type GeminiClientOptions,
  type GeminiFinish,
  type Part,
  type StreamFraming,
} from './gemini-client';
import { upstreamObject } from './upstream-json';
import type { CallInfo, ClientRequest, JsonObject, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamCall, UpstreamUsage } from './types';

/** Thinking budgets for Gemini 3's thinkingLevel; Anthropic's minimum is 1024. */
const LEVEL_BUDGETS = { minimal: 1024, low: 2048, medium: 8192, high: 16384 } as const;
const MIN_THINKING_BUDGET = 1024;

type Block = Anthropic.ContentBlock;
/** A content block of a reply, as received. */
type ReceivedBlock = Received<Anthropic.ContentBlock>;

// ---------------------------------------------------------------------------------------------
// Request

function mediaBlock(p: Part, param: string, model: ModelInfo): Block | undefined {
  const media = mediaOf(p, param);
  if (!media) return undefined;
  const mime = media.mimeType;
  if (media.kind === 'file') {
    if (mime === '' || mime.startsWith('image/')) return { type: 'image', source: { type: 'url', url: media.uri } };
    if (mime === 'application/pdf') return { type: 'document', source: { type: 'url', url: media.uri } };
    throw notSupported(`${param}.fileData`, model, `a ${mime} file by URI can be read only by a Gemini model.`);
  }
  if (mime.startsWith('image/')) return { type: 'image', source: { type: 'base64', media_type: mime, data: media.data } };
  if (mime === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: mime, data: media.data } };
  if (mime.startsWith('text/')) return { type: 'text', text: Buffer.from(media.data, 'base64').toString('utf8') };
  throw notSupported(`${param}.inlineData.mimeType`, model, `${mime} input can be read only by a Gemini model.`);
}

interface Conversation {
  messages: Anthropic.MessageParam[];
  /** The last turn answers function calls: Anthropic then wants the signed thinking of the turn before back. */
  inToolLoop: boolean;
  /** That turn before carried its thinking (a signature of ours came back with its calls). */
  loopHasThinking: boolean;
}

function conversation(body: JsonObject, model: ModelInfo): Conversation {
  const messages: Anthropic.MessageParam[] = [];
  const ids = new CallIds();
  let lastModelThinking = false;
  let inToolLoop = false;
  for (const turn of turnsOf(body)) {
    if (turn.role === 'model') {
      ids.newTurn();
      // Thinking blocks lead the turn (Anthropic's order), whichever call carried their signature.
      const thinking: Block[] = [];
      const blocks: Block[] = [];
      turn.parts.forEach((p, j) => {
        const param = `${turn.param}.parts.${j}`;
        const signed = openThinking(typeof p.thoughtSignature === 'string' ? p.thoughtSignature : undefined);
        if (signed) thinking.push(...signed);
        if (isThought(p)) return;
        if (typeof p.text === 'string') {
          if (p.text !== '') blocks.push({ type: 'text', text: p.text });
        } else if (p.functionCall !== undefined || p.function_call !== undefined) {
          const c = ids.call(p, param);
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
        } else refusePart(p, param, model);
      });
      lastModelThinking = thinking.length > 0;
      inToolLoop = false;
      if (blocks.length > 0) messages.push({ role: 'assistant', content: [...thinking, ...blocks] });
    } else {
      const results: Block[] = [];
      const blocks: Block[] = [];
      turn.parts.forEach((p, j) => {
        const param = `${turn.param}.parts.${j}`;
        if (isThought(p)) return;
        if (typeof p.text === 'string') {
          if (p.text !== '') blocks.push({ type: 'text', text: p.text });
        } else if (p.functionResponse !== undefined || p.function_response !== undefined) {
          const r = ids.response(p, param);
          const isError = isObject(r.response) && r.response.error !== undefined && Object.keys(r.response).length === 1;
          results.push({ type: 'tool_result', tool_use_id: r.callId, content: responseText(r.response), ...(isError ? { is_error: true } : {}) });
        } else {
          const media = mediaBlock(p, param, model);
          if (!media) refusePart(p, param, model);
          blocks.push(media);
        }
      });
      inToolLoop = results.length > 0;
      // Tool results first: Anthropic wants them to open the turn after the calls.
      const content = [...results, ...blocks];
      if (content.length === 0) continue;
      const last = messages[messages.length - 1];
      // A user turn built here always holds blocks.
      if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...content);
      else messages.push({ role: 'user', content });
    }
  }
  return { messages, inToolLoop, loopHasThinking: lastModelThinking };
}

function thinkingBudget(effort: ReturnType<typeof effortOf>, budget: number | undefined, maxTokens: number): number | undefined {
  if (effort === undefined || effort === 'none') return undefined;
  const wanted = budget !== undefined && budget > 0 ? budget : LEVEL_BUDGETS[effort];
  const b = Math.min(Math.max(wanted, MIN_THINKING_BUDGET), maxTokens - 1);
  return b >= MIN_THINKING_BUDGET ? b : undefined;
}

export function buildRequest(req: ClientRequest, call: CallInfo): { body: Anthropic.MessagesRequest; dropped: string[] } {
  const body = req.body.json;
  const model = call.model;
  const dropped = droppedMembers(body, model);
  const cfg = generationConfigOf(body, model);
  dropped.push(...cfg.dropped);
  const conv = conversation(body, model);
  // Anthropic requires max_tokens; Gemini's default is the model's own maximum.
  const maxTokens = Math.min(cfg.maxOutputTokens ?? model.maxOutputTokens, model.maxOutputTokens);

  const system: string[] = [];
  const text = systemTextOf(body, model);
  if (text !== undefined) system.push(text);
  if (cfg.json) system.push(cfg.json.schema ? jsonSchemaInstruction(cfg.json.schema) : JSON_OBJECT_INSTRUCTION);
  const out: Anthropic.MessagesRequest = {
    model: model.name,
    max_tokens: maxTokens,
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages: conv.messages,
  };

  const tools = toolsOf(body);
  dropped.push(...tools.dropped.map((t) => `tools.${t}`));
  const calling = functionCallingOf(body);
  const functions = callableFunctions(tools.functions, calling);
  let forced = false;
  if (functions.length > 0) {
    out.tools = functions.map((f) => ({ name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), input_schema: f.schema }));
    if (calling?.mode === 'NONE') out.tool_choice = { type: 'none' };
    else if (calling?.mode === 'ANY') {
      out.tool_choice = functions.length === 1 ? { type: 'tool', name: functions[0].name } : { type: 'any' };
      forced = true;
    }
  }
  if (cfg.stopSequences) out.stop_sequences = cfg.stopSequences;
  for (const k of ['presencePenalty', 'frequencyPenalty', 'seed'] as const) if (cfg[k] !== undefined) dropped.push(`generationConfig.${k}`);

  // Anthropic refuses thinking with a forced tool, and mid tool loop wants the signed thinking of
  // the turn before back: without it (a conversation begun elsewhere), the call goes without.
  const budget = forced || (conv.inToolLoop && !conv.loopHasThinking) ? undefined : thinkingBudget(effortOf(cfg.thinking), cfg.thinking.budget, maxTokens);
  if (budget !== undefined) {
    // With thinking on Anthropic accepts no temperature but 1 and no top_k: the knobs are left out.
    out.thinking = { type: 'enabled', budget_tokens: budget };
    for (const k of ['temperature', 'topP', 'topK'] as const) if (cfg[k] !== undefined) dropped.push(`generationConfig.${k}`);
  } else {
    // Anthropic's temperature range is 0..1, Gemini's 0..2: clamped to the upstream's top.
    if (cfg.temperature !== undefined) out.temperature = Math.min(1, cfg.temperature);
    // Recent Claude models refuse temperature and top_p together; top_p goes only when it is the one knob set.
    else if (cfg.topP !== undefined) out.top_p = cfg.topP;
    if (cfg.topK !== undefined) out.top_k = cfg.topK;
  }
  if (call.stream) out.stream = true;
  return { body: out, dropped };
}

// ---------------------------------------------------------------------------------------------
// Replies

function finishOf(stopReason: unknown): GeminiFinish {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'MAX_TOKENS';
    case 'refusal':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}

const STREAM_ERROR_STATUS: Record<string, number> = { overloaded_error: 529, api_error: 500, rate_limit_error: 429 };

function upstreamError(data: JsonObject): UpstreamFailure {
  const err = isObject(data.error) ? data.error : {};
  const type = typeof err.type === 'string' ? err.type : 'error';
  const message = typeof err.message === 'string' ? err.message : '';
  return new UpstreamFailure('status', `upstream stream error: ${type}${message ? `: ${message.slice(0, 200)}` : ''}`, STREAM_ERROR_STATUS[type]);
}

/**
 * Gathers the reply's parts from Anthropic's blocks: thinking blocks are kept back (their text
 * shown as thought parts when asked for) and sealed into the signature of the first function call
 * after them, which the client sends back with the call on its next turn.
 */
class PartBuilder {
  readonly parts: Part[] = [];
  private thinking: ReceivedBlock[] = [];

  constructor(private readonly includeThoughts: boolean) {}

  thought(block: ReceivedBlock): Part[] {
    this.thinking.push(block);
    return this.includeThoughts && typeof block.thinking === 'string' && block.thinking !== '' ? [{ text: block.thinking, thought: true }] : [];
  }

  functionCall(id: string, name: string, args: unknown): Part {
    const signature = this.thinking.length > 0 ? sealThinking(this.thinking) : undefined;
    this.thinking = [];
    return functionCallPart(id, name, args, signature);
  }
}

function response(text: string, call: CallInfo, includeThoughts: boolean): TranslatedReply {
  const msg = upstreamObject<Anthropic.Message>(text, 'the reply');
  if (msg.type === 'error') throw upstreamError(msg);
  if (!Array.isArray(msg.content)) throw new UpstreamFailure('protocol', 'upstream reply has no content');
  const b = new PartBuilder(includeThoughts);
  let completion = '';
  for (const block of msg.content) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      if (block.text !== '') b.parts.push({ text: block.text });
      completion += block.text;
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      b.parts.push(...b.thought(block));
      if (typeof block.thinking === 'string') completion += block.thinking;
    } else if (block.type === 'tool_use' && typeof block.name === 'string') {
      b.parts.push(b.functionCall(typeof block.id === 'string' ? block.id : `toolu_${call.requestId}`, block.name, block.input));
      completion += JSON.stringify(block.input ?? {});
    }
  }
  const finish = finishOf(msg.stop_reason);
  return { usage: takeAnthropicUsage(null, msg.usage, true), completion, render: (settled) => geminiResponse(call, b.parts, finish, settled) };
}

interface OpenBlock {
  block: ReceivedBlock;
  /** A tool_use block's input JSON, gathered (Gemini sends a call whole). */
  json: string;
}

class AnthropicStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: GeminiChunkWriter;
  private readonly parts: PartBuilder;
  private readonly open = new Map<number, OpenBlock>();
  private finish: GeminiFinish = 'STOP';

  constructor(framing: StreamFraming, includeThoughts: boolean, call: CallInfo) {
    this.out = new GeminiChunkWriter(call, framing);
    this.parts = new PartBuilder(includeThoughts);
  }

  push(ev: SseEvent): string {
    if (ev.data === '') return '';
    const data = upstreamObject<Anthropic.MessagesStreamEvent>(ev.data, 'the stream');
    const type = typeof data.type === 'string' ? data.type : ev.event;
    const index = typeof data.index === 'number' ? data.index : -1;
    switch (type) {
      case 'message_start':
        this.usage = takeAnthropicUsage(this.usage, isObject(data.message) ? data.message.usage : undefined, false);
        return '';
      case 'content_block_start': {
        const block = isObject(data.content_block) ? { ...data.content_block } : {};
        this.open.set(index, { block, json: '' });
        if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          this.completion += block.text;
          return this.out.text(block.text);
        }
        return '';
      }
      case 'content_block_delta': {
        const delta = isObject(data.delta) ? data.delta : {};
        const open = this.open.get(index);
        if (delta.type === 'text_delta' && typeof delta.text === 'string') {
          this.completion += delta.text;
          return this.out.text(delta.text);
        }
        if (!open) return '';
        if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
          this.completion += delta.thinking;
          open.block.thinking = String(open.block.thinking ?? '') + delta.thinking;
        } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
          open.block.signature = String(open.block.signature ?? '') + delta.signature;
        } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          this.completion += delta.partial_json;
          open.json += delta.partial_json;
        }
        return '';
      }
      case 'content_block_stop': {
        const open = this.open.get(index);
        this.open.delete(index);
        if (!open) return '';
        const block = open.block;
        if (block.type === 'thinking' || block.type === 'redacted_thinking') return this.out.parts(this.parts.thought(block));
        if (block.type === 'tool_use' && typeof block.name === 'string') {
          const id = typeof block.id === 'string' ? block.id : `toolu_${index}`;
          return this.out.parts([this.parts.functionCall(id, block.name, parseArgs(open.json))]);
        }
        return '';
      }
      case 'message_delta': {
        this.usage = takeAnthropicUsage(this.usage, data.usage, true);
        const delta = isObject(data.delta) ? data.delta : {};
        if (delta.stop_reason !== undefined && delta.stop_reason !== null) this.finish = finishOf(delta.stop_reason);
        return '';
      }
      case 'message_stop':
        this.finished = true;
        return '';
      case 'error':
        throw upstreamError(data);
      default:
        // ping, and event types added later.
        return '';
    }
  }

  end(settled: Parameters<StreamTranslator['end']>[0]): string {
    return this.out.end(this.finish, settled);
  }
}

export const geminiToAnthropic = (opts: GeminiClientOptions): Translator => ({
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    const { body, dropped } = buildRequest(req, call);
    return { body: JSON.stringify(body), headers: { 'anthropic-version': ANTHROPIC_VERSION }, ...droppedOf(dropped) };
  },
  response: (text, call) => response(text, call, opts.includeThoughts),
  stream: (call) => new AnthropicStream(opts.framing, opts.includeThoughts, call),
  error: (status, text) => geminiError(status, text, nestedMessage),
});

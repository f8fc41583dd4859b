// Anthropic Messages client -> OpenAI chat completions upstream (Claude Code or @anthropic-ai/sdk
// reaching a GPT, DeepSeek or Qwen model). The mapping choices are listed in docs/protocols.md ("Anthropic
// Messages clients on OpenAI and Gemini models"); the protocol facts in translation.md.
import type { Anthropic, OpenAIChat } from '@/lib/gateway/translate/wire';
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { openaiUsage } from '@/lib/gateway/translate/usage';
import type { JsonObject } from '@/lib/gateway/body';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import {
  AnthropicEventWriter,
  anthropicError,
  anthropicMessage,
  anthropicUsage,
  checkForcedTool,
  dataUrl,
  documentOf,
  dropAnthropicOnly,
  effortOfBudget,
  imageOf,
  jsonFormatOf,
  maxTokensOf,
  numberOf,
  refuseBlock,
  refusePlatformMembers,
  shortUserId,
  stopSequencesOf,
  systemTexts,
  systemTurnText,
  textOfBlock,
  thinkingOf,
  toolChoiceOf,
  toolResultOf,
  toolsOf,
  toolUseId,
  toolUseOf,
  turnsOf,
  userIdOf,
  type AnthropicTurn,
  type ImageRef,
  type StopReason,
} from './anthropic-client';
import { DropRecord } from './dropped';
import { eventData, upstreamObject } from './upstream-json';
import type { CallInfo, ClientRequest, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamCall, UpstreamUsage } from './types';

// ---------------------------------------------------------------------------------------------
// Request

/** The catalogue tag of a model that takes `reasoning_effort` (o-series, gpt-5, DeepSeek's reasoner...). */
export const REASONING_TAG = 'reasoning';

type ChatPart = OpenAIChat.ChatContentPart;
type ChatMessage = OpenAIChat.ChatMessage;

function imagePart(img: ImageRef): ChatPart {
  return { type: 'image_url', image_url: { url: img.kind === 'url' ? img.url : dataUrl(img) } };
}

/** One text: a string (what every OpenAI-compatible server takes); several parts stay parts. */
function contentOf(parts: ChatPart[]): string | ChatPart[] {
  return parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts;
}

/**
 * A user turn: its tool_result blocks become `tool` messages first (OpenAI wants them right after
 * the assistant's tool_calls), then one user message with the rest. Images inside tool results
 * cannot ride in a tool message: they open that user message.
 */
function userMessages(turn: AnthropicTurn, model: ModelInfo): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const toolImages: ChatPart[] = [];
  const parts: ChatPart[] = [];
  turn.blocks.forEach((b, j) => {
    const param = `${turn.param}.content.${j}`;
    switch (b.type) {
      case 'text':
        parts.push({ type: 'text', text: textOfBlock(b, param) });
        break;
      case 'image':
        parts.push(imagePart(imageOf(b, param, model)));
        break;
      case 'document': {
        const doc = documentOf(b, param, model);
        parts.push(
          doc.kind === 'text'
            ? { type: 'text', text: doc.text }
            : { type: 'file', file: { filename: doc.title ?? 'document.pdf', file_data: dataUrl({ mediaType: 'application/pdf', data: doc.data }) } },
        );
        break;
      }
      case 'tool_result': {
        const r = toolResultOf(b, param, model);
        const text = r.texts.join('\n');
        tools.push({ role: 'tool', tool_call_id: r.toolUseId, content: r.isError ? `Error: ${text}` : text });
        toolImages.push(...r.images.map(imagePart));
        break;
      }
      default:
        refuseBlock(b, param, model);
    }
  });
  const rest = [...toolImages, ...parts];
  return rest.length > 0 ? [...tools, { role: 'user', content: contentOf(rest) }] : tools;
}

/** An assistant turn: text blocks -> content, tool_use -> tool_calls; thinking has no input field upstream and is dropped. */
function assistantMessage(turn: AnthropicTurn, model: ModelInfo): ChatMessage | null {
  const parts: ChatPart[] = [];
  const calls: OpenAIChat.ChatToolCall[] = [];
  turn.blocks.forEach((b, j) => {
    const param = `${turn.param}.content.${j}`;
    if (b.type === 'text') parts.push({ type: 'text', text: textOfBlock(b, param) });
    else if (b.type === 'tool_use') {
      const t = toolUseOf(b, param);
      calls.push({ id: t.id, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.input) } });
    } else if (b.type !== 'thinking' && b.type !== 'redacted_thinking') refuseBlock(b, param, model);
  });
  if (parts.length === 0 && calls.length === 0) return null;
  const msg: ChatMessage = { role: 'assistant', content: parts.length === 0 ? null : contentOf(parts) };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function buildRequest(req: ClientRequest, call: CallInfo, drops: DropRecord): OpenAIChat.ChatRequest {
  const body = req.body.json;
  const model = call.model;
  refusePlatformMembers(body, model);
  dropAnthropicOnly(body, drops);
  const messages: ChatMessage[] = [];
  const system = systemTexts(body);
  if (system.length > 0) messages.push({ role: 'system', content: system.join('\n\n') });
  for (const turn of turnsOf(body, drops)) {
    if (turn.role === 'user') messages.push(...userMessages(turn, model));
    else if (turn.role === 'system') messages.push({ role: 'system', content: systemTurnText(turn) });
    else {
      const m = assistantMessage(turn, model);
      if (m) messages.push(m);
    }
  }
  const out: OpenAIChat.ChatRequest = { model: model.name, messages };

  // OpenAI's own models take max_completion_tokens (its reasoning models refuse max_tokens); the
  // OpenAI-compatible servers of other vendors know max_tokens.
  const maxTokens = maxTokensOf(body, model);
  if (maxTokens !== undefined) out[model.ownedBy === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = maxTokens;
  const temperature = numberOf(body, 'temperature');
  if (temperature !== undefined) out.temperature = temperature;
  const topP = numberOf(body, 'top_p');
  if (topP !== undefined) out.top_p = topP;
  if (numberOf(body, 'top_k') !== undefined) drops.add('top_k'); // a sampling hint OpenAI has no parameter for
  const stop = stopSequencesOf(body);
  if (stop) out.stop = stop;
  // OpenAI caps `user` at 64 characters; Claude Code's metadata.user_id is longer.
  const user = userIdOf(body);
  if (user !== undefined) out.user = shortUserId(user, 64);

  const tools = toolsOf(body, model, drops);
  const choice = toolChoiceOf(body);
  checkForcedTool(choice, tools, model);
  if (tools.length > 0) {
    out.tools = tools.map((t) => {
      const fn: OpenAIChat.ChatFunctionTool['function'] = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.schema;
      if (t.strict !== undefined) fn.strict = t.strict;
      return { type: 'function', function: fn };
    });
    // OpenAI refuses tool_choice and parallel_tool_calls without tools: they go only with them.
    if (choice) {
      out.tool_choice = choice.mode === 'any' ? 'required' : choice.mode === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.mode;
      if (choice.disableParallel) out.parallel_tool_calls = false;
    }
  }

  const thinking = thinkingOf(body);
  const effort = thinking.effort ?? (thinking.budgetTokens !== undefined ? effortOfBudget(thinking.budgetTokens) : undefined);
  if (effort !== undefined) {
    // OpenAI refuses reasoning_effort to a model that does not reason (gpt-4o-mini), and Claude
    // Code asks for thinking whatever the model: only models the catalogue tags `reasoning` get it.
    if (model.tags.includes(REASONING_TAG)) out.reasoning_effort = effort;
    else {
      if (thinking.enabled) drops.add('thinking');
      if (thinking.effort !== undefined) drops.add('output_config.effort');
    }
  }

  const schema = jsonFormatOf(body);
  if (schema) out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };

  if (call.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replies

/** finish_reason -> stop_reason. A reply with tool calls is tool_use whatever the server said. */
function stopReasonOf(finish: unknown, hasToolCalls: boolean, refused: boolean): StopReason {
  if (hasToolCalls) return 'tool_use';
  if (refused || finish === 'content_filter') return 'refusal';
  if (finish === 'length') return 'max_tokens';
  return 'end_turn';
}

/** The stop string that ended the reply, where the server says (vLLM puts it in choice.stop_reason). */
function matchedStop(choice: JsonObject): string | null {
  return choice.finish_reason === 'stop' && typeof choice.stop_reason === 'string' && choice.stop_reason !== '' ? choice.stop_reason : null;
}

/** Reasoning text in DeepSeek's field, or `reasoning` (OpenRouter, vLLM). */
function reasoningOf(m: JsonObject): string {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' ? r : '';
}

function textContentOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** Function arguments as the server sent them: a JSON text (a few servers send the object). */
function argumentsText(v: unknown): string {
  if (typeof v === 'string') return v;
  return v === undefined || v === null ? '' : JSON.stringify(v);
}

/** Tool input from its JSON text; what does not parse to an object becomes {} (Anthropic inputs are objects). */
function parseInput(args: string): JsonObject {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

function upstreamErrorText(body: unknown): string {
  return JSON.stringify(body).slice(0, 300);
}

function response(text: string, call: CallInfo): TranslatedReply {
  const parsed = upstreamObject<OpenAIChat.ChatCompletion>(text, 'the reply');
  if (parsed.error !== undefined && parsed.error !== null) {
    throw new UpstreamFailure('status', `upstream answered an error: ${upstreamErrorText(parsed.error)}`);
  }
  if (!Array.isArray(parsed.choices) || !isObject(parsed.choices[0])) {
    throw new UpstreamFailure('protocol', 'upstream reply is not a chat completion');
  }
  const choice = parsed.choices[0];
  const message = isObject(choice.message) ? choice.message : {};
  const content: Anthropic.ContentBlock[] = [];
  let completion = '';
  const reasoning = reasoningOf(message);
  if (reasoning) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : '';
  const answer = textContentOf(message.content) || refusal;
  if (answer) content.push({ type: 'text', text: answer });
  completion += reasoning + answer;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  calls.forEach((tc, n) => {
    const fn = isObject(tc.function) ? tc.function : {};
    const args = argumentsText(fn.arguments);
    completion += args;
    content.push({
      type: 'tool_use',
      id: typeof tc.id === 'string' && tc.id !== '' ? tc.id : toolUseId(call, n),
      name: typeof fn.name === 'string' ? fn.name : '',
      input: parseInput(args),
    });
  });
  const stopSequence = calls.length === 0 ? matchedStop(choice) : null;
  const stopReason = stopSequence ? 'stop_sequence' : stopReasonOf(choice.finish_reason, calls.length > 0, refusal !== '');
  return {
    usage: openaiUsage(parsed.usage, parsed.service_tier),
    completion,
    render: (settled) => anthropicMessage(call, content, stopReason, stopSequence, settled),
  };
}

interface ToolCallState {
  id?: string;
  name?: string;
  /** Argument fragments that arrived before the call's name (its block cannot start without one). */
  pending: string;
  /** The Anthropic block index, once started. */
  block: number | null;
}

class OpenaiStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: AnthropicEventWriter;
  private readonly calls = new Map<number, ToolCallState>();
  private lastCall = -1;
  private startedCalls = 0;
  private finishReason: unknown = null;
  private refused = false;
  private stopSequence: string | null = null;

  constructor(private readonly call: CallInfo) {
    this.out = new AnthropicEventWriter(call);
  }

  push(ev: SseEvent): string {
    const data = eventData(ev);
    if (data === '') return '';
    if (data === '[DONE]') {
      this.finished = true;
      return '';
    }
    const chunk = upstreamObject<OpenAIChat.ChatCompletionChunk>(data, 'the stream');
    if (chunk.error !== undefined && chunk.error !== null) {
      throw new UpstreamFailure('status', `upstream stream error: ${upstreamErrorText(chunk.error)}`);
    }
    let bytes = this.out.start();
    this.usage = openaiUsage(chunk.usage, chunk.service_tier) ?? this.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find(isObject) : undefined;
    if (!choice) return bytes;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = reasoningOf(delta);
    if (reasoning) {
      bytes += this.out.thinking(reasoning);
      this.completion += reasoning;
    }
    for (const field of ['content', 'refusal'] as const) {
      const text = delta[field];
      if (typeof text === 'string' && text !== '') {
        bytes += this.out.text(text);
        this.completion += text;
        if (field === 'refusal') this.refused = true;
      }
    }
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) if (isObject(tc)) bytes += this.toolDelta(tc);
    if (typeof choice.finish_reason === 'string') {
      this.finishReason = choice.finish_reason;
      this.stopSequence = matchedStop(choice);
      this.finished = true;
      bytes += this.out.stop();
    }
    return bytes;
  }

  /**
   * One tool-call delta. A call's block starts once its name is known; its argument fragments
   * follow as input_json_delta. Servers send calls one after the other; a fragment for a call
   * whose block was already stopped still goes to that block's index, where the SDKs' index-keyed
   * accumulators put it.
   */
  private toolDelta(tc: JsonObject): string {
    const id = typeof tc.id === 'string' && tc.id !== '' ? tc.id : undefined;
    let key: number;
    if (typeof tc.index === 'number') key = tc.index;
    else if (id !== undefined && this.calls.get(this.lastCall)?.id !== id) key = this.lastCall + 1;
    else key = Math.max(this.lastCall, 0);
    let st = this.calls.get(key);
    if (!st) {
      st = { pending: '', block: null };
      this.calls.set(key, st);
    }
    this.lastCall = Math.max(this.lastCall, key);
    const fn = isObject(tc.function) ? tc.function : {};
    st.id ??= id;
    if (st.name === undefined && typeof fn.name === 'string' && fn.name !== '') st.name = fn.name;
    const frag = argumentsText(fn.arguments);
    this.completion += frag;
    if (st.block !== null) return frag ? this.out.delta({ type: 'input_json_delta', partial_json: frag }, st.block) : '';
    st.pending += frag;
    if (st.name === undefined) return '';
    const started = this.out.block({ type: 'tool_use', id: st.id ?? toolUseId(this.call, this.startedCalls), name: st.name, input: {} });
    this.startedCalls++;
    st.block = started.index;
    let bytes = started.bytes;
    if (st.pending) bytes += this.out.delta({ type: 'input_json_delta', partial_json: st.pending });
    st.pending = '';
    return bytes;
  }

  end(settled: Parameters<StreamTranslator['end']>[0]): string {
    const tools = this.startedCalls > 0;
    const stopSequence = tools ? null : this.stopSequence;
    const reason = stopSequence ? 'stop_sequence' : stopReasonOf(this.finishReason, tools, this.refused);
    return this.out.finish(reason, stopSequence, anthropicUsage(settled.usage, settled.toolCalls));
  }
}

function errorMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const e = body.error;
  if (isObject(e) && typeof e.message === 'string') return e.message;
  if (typeof e === 'string') return e;
  return typeof body.message === 'string' ? body.message : undefined;
}

export const anthropicToOpenai: Translator = {
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    const drops = new DropRecord();
    const body = JSON.stringify(buildRequest(req, call, drops));
    return { body, dropped: drops.list() };
  },
  response,
  stream(call: CallInfo): StreamTranslator {
    return new OpenaiStream(call);
  },
  error(status: number, text: string) {
    return anthropicError(status, text, errorMessage);
  },
};

// Gemini client -> OpenAI chat completions upstream (google-genai or Gemini CLI reaching a GPT,
// DeepSeek or Qwen model). The mapping choices are listed in docs/protocols.md ("Gemini clients");
// the comments here say why where it is not obvious.
import type { OpenAIChat } from '@/lib/gateway/translate/wire';
import { isObject } from '@/lib/gateway/translate/wire/json';
import type { ModelInfo } from '@/lib/config';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { openaiUsage } from '@/lib/gateway/translate/usage';
import {
  CallIds,
  GeminiChunkWriter,
  callableFunctions,
  droppedMembers,
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
  parseArgs,
  refusePart,
  responseText,
  systemTextOf,
  toolsOf,
  turnsOf,
  type GeminiFinish,
  type Part,
  droppedOf,
  type GeminiClientOptions,
  type StreamFraming,
} from './gemini-client';
import { eventData, upstreamObject } from './upstream-json';
import type { CallInfo, ClientRequest, JsonObject, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamCall, UpstreamUsage } from './types';

// ---------------------------------------------------------------------------------------------
// Request

function mediaPart(p: Part, param: string, model: ModelInfo): OpenAIChat.ChatContentPart | undefined {
  const media = mediaOf(p, param);
  if (!media) return undefined;
  const mime = media.mimeType;
  if (media.kind === 'file') {
    if (mime === '' || mime.startsWith('image/')) return { type: 'image_url', image_url: { url: media.uri } };
    throw notSupported(`${param}.fileData`, model, `a ${mime} file by URI can be read only by a Gemini model; send images by URI or the data inline.`);
  }
  if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${media.data}` } };
  if (mime === 'application/pdf') return { type: 'file', file: { filename: 'document.pdf', file_data: `data:${mime};base64,${media.data}` } };
  if (mime === 'audio/wav' || mime === 'audio/mp3' || mime === 'audio/mpeg') {
    return { type: 'input_audio', input_audio: { data: media.data, format: mime === 'audio/wav' ? 'wav' : 'mp3' } };
  }
  if (mime.startsWith('text/')) return { type: 'text', text: Buffer.from(media.data, 'base64').toString('utf8') };
  throw notSupported(`${param}.inlineData.mimeType`, model, `${mime} input can be read only by a Gemini model.`);
}

const contentOf = (parts: OpenAIChat.ChatContentPart[]): string | OpenAIChat.ChatContentPart[] =>
  parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts;

function messagesOf(body: JsonObject, model: ModelInfo): OpenAIChat.ChatMessage[] {
  const messages: OpenAIChat.ChatMessage[] = [];
  const system = systemTextOf(body, model);
  if (system !== undefined) messages.push({ role: 'system', content: system });
  const ids = new CallIds();
  for (const turn of turnsOf(body)) {
    if (turn.role === 'model') {
      ids.newTurn();
      let text = '';
      const calls: OpenAIChat.ChatToolCall[] = [];
      turn.parts.forEach((p, j) => {
        const param = `${turn.param}.parts.${j}`;
        // Thoughts have no input field on OpenAI: the model's reasoning is not replayed.
        if (isThought(p)) return;
        if (typeof p.text === 'string') text += p.text;
        else if (p.functionCall !== undefined || p.function_call !== undefined) {
          const c = ids.call(p, param);
          calls.push({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } });
        } else refusePart(p, param, model);
      });
      if (text === '' && calls.length === 0) continue;
      const msg: OpenAIChat.ChatMessage = { role: 'assistant', content: text === '' ? null : text };
      if (calls.length > 0) msg.tool_calls = calls;
      messages.push(msg);
    } else {
      // Function results first: OpenAI wants them right after the assistant's tool_calls.
      const results: OpenAIChat.ChatMessage[] = [];
      const parts: OpenAIChat.ChatContentPart[] = [];
      turn.parts.forEach((p, j) => {
        const param = `${turn.param}.parts.${j}`;
        if (isThought(p)) return;
        if (typeof p.text === 'string') {
          if (p.text !== '') parts.push({ type: 'text', text: p.text });
        } else if (p.functionResponse !== undefined || p.function_response !== undefined) {
          const r = ids.response(p, param);
          results.push({ role: 'tool', tool_call_id: r.callId, content: responseText(r.response) });
        } else {
          const media = mediaPart(p, param, model);
          if (!media) refusePart(p, param, model);
          parts.push(media);
        }
      });
      messages.push(...results);
      if (parts.length > 0) messages.push({ role: 'user', content: contentOf(parts) });
    }
  }
  return messages;
}

/** The upstream body and what of the client's request it leaves out (for x-service-dropped). */
export function buildRequest(req: ClientRequest, call: CallInfo): { body: OpenAIChat.ChatRequest; dropped: string[] } {
  const body = req.body.json;
  const model = call.model;
  const dropped = droppedMembers(body, model);
  const cfg = generationConfigOf(body, model);
  dropped.push(...cfg.dropped);
  const out: OpenAIChat.ChatRequest = { model: model.name, messages: messagesOf(body, model) };

  // OpenAI's own models take max_completion_tokens (its reasoning models refuse max_tokens).
  if (cfg.maxOutputTokens !== undefined) out[model.ownedBy === 'openai' ? 'max_completion_tokens' : 'max_tokens'] = cfg.maxOutputTokens;
  if (cfg.temperature !== undefined) out.temperature = cfg.temperature;
  if (cfg.topP !== undefined) out.top_p = cfg.topP;
  if (cfg.topK !== undefined) dropped.push('generationConfig.topK');
  if (cfg.stopSequences) out.stop = cfg.stopSequences.slice(0, 4);
  if (cfg.presencePenalty !== undefined) out.presence_penalty = cfg.presencePenalty;
  if (cfg.frequencyPenalty !== undefined) out.frequency_penalty = cfg.frequencyPenalty;
  if (cfg.seed !== undefined) out.seed = cfg.seed;
  if (cfg.json) {
    out.response_format = cfg.json.schema
      ? // Gemini's schemas are not written for OpenAI's strict mode (all properties required, no extra keys).
        { type: 'json_schema', json_schema: { name: 'response', schema: cfg.json.schema, strict: false } }
      : { type: 'json_object' };
  }
  const effort = effortOf(cfg.thinking);
  if (effort !== undefined) out.reasoning_effort = effort;

  const tools = toolsOf(body);
  dropped.push(...tools.dropped.map((t) => `tools.${t}`));
  const calling = functionCallingOf(body);
  const functions = callableFunctions(tools.functions, calling);
  // OpenAI refuses tool_choice without tools: a NONE config goes only with them.
  if (functions.length > 0) {
    out.tools = functions.map((f) => ({
      type: 'function',
      function: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), parameters: f.schema },
    }));
    if (calling?.mode === 'NONE') out.tool_choice = 'none';
    else if (calling?.mode === 'ANY') out.tool_choice = functions.length === 1 ? { type: 'function', function: { name: functions[0].name } } : 'required';
  }

  if (call.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return { body: out, dropped };
}

// ---------------------------------------------------------------------------------------------
// Replies

function finishOf(reason: unknown): GeminiFinish {
  if (reason === 'length') return 'MAX_TOKENS';
  if (reason === 'content_filter') return 'SAFETY';
  return 'STOP';
}

/** Reasoning text in DeepSeek's field, or `reasoning` (OpenRouter, vLLM). */
function reasoningOf(m: JsonObject): string {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' ? r : '';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

const argumentsText = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

const callId = (call: CallInfo, n: number) => `call_${call.requestId}_${n}`;

function upstreamError(err: unknown): UpstreamFailure {
  return new UpstreamFailure('status', `upstream answered an error: ${JSON.stringify(err).slice(0, 300)}`);
}

function response(text: string, call: CallInfo, includeThoughts: boolean): TranslatedReply {
  const parsed = upstreamObject<OpenAIChat.ChatCompletion>(text, 'the reply');
  if (parsed.error !== undefined && parsed.error !== null) throw upstreamError(parsed.error);
  if (!Array.isArray(parsed.choices) || !isObject(parsed.choices[0])) throw new UpstreamFailure('protocol', 'upstream reply is not a chat completion');
  const choice = parsed.choices[0];
  const message = isObject(choice.message) ? choice.message : {};
  const parts: Part[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning && includeThoughts) parts.push({ text: reasoning, thought: true });
  const answer = textOf(message.content) || (typeof message.refusal === 'string' ? message.refusal : '');
  if (answer) parts.push({ text: answer });
  let completion = reasoning + answer;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  calls.forEach((tc, n) => {
    const fn = isObject(tc.function) ? tc.function : {};
    const args = argumentsText(fn.arguments);
    completion += args;
    parts.push(
      functionCallPart(typeof tc.id === 'string' && tc.id !== '' ? tc.id : callId(call, n), typeof fn.name === 'string' ? fn.name : '', parseArgs(args)),
    );
  });
  const finish = finishOf(choice.finish_reason);
  return { usage: openaiUsage(parsed.usage, parsed.service_tier), completion, render: (settled) => geminiResponse(call, parts, finish, settled) };
}

interface PendingCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * Text and thoughts go out as they come; a tool call's arguments arrive in fragments while Gemini
 * sends each call whole, so calls are gathered and sent once the upstream says the reply is done.
 */
class OpenaiStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: GeminiChunkWriter;
  private readonly calls = new Map<number, PendingCall>();
  private finish: GeminiFinish = 'STOP';
  private callsSent = false;

  constructor(
    private readonly call: CallInfo,
    framing: StreamFraming,
    private readonly includeThoughts: boolean,
  ) {
    this.out = new GeminiChunkWriter(call, framing);
  }

  push(ev: SseEvent): string {
    const data = eventData(ev);
    if (data === '') return '';
    if (data === '[DONE]') {
      this.finished = true;
      return this.flushCalls();
    }
    const chunk = upstreamObject<OpenAIChat.ChatCompletionChunk>(data, 'the stream');
    if (chunk.error !== undefined && chunk.error !== null) throw upstreamError(chunk.error);
    this.usage = openaiUsage(chunk.usage, chunk.service_tier) ?? this.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find(isObject) : undefined;
    if (!choice) return '';
    const delta = isObject(choice.delta) ? choice.delta : {};
    let bytes = '';
    const reasoning = reasoningOf(delta);
    if (reasoning) {
      this.completion += reasoning;
      if (this.includeThoughts) bytes += this.out.text(reasoning, true);
    }
    for (const field of ['content', 'refusal'] as const) {
      const text = delta[field];
      if (typeof text === 'string' && text !== '') {
        this.completion += text;
        bytes += this.out.text(text);
      }
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const tc of delta.tool_calls) {
        if (!isObject(tc)) continue;
        const index = typeof tc.index === 'number' ? tc.index : this.calls.size;
        let st = this.calls.get(index);
        if (!st) this.calls.set(index, (st = { name: '', args: '' }));
        const fn = isObject(tc.function) ? tc.function : {};
        if (typeof tc.id === 'string' && tc.id !== '') st.id ??= tc.id;
        if (typeof fn.name === 'string') st.name += st.name === fn.name ? '' : fn.name;
        const frag = argumentsText(fn.arguments);
        st.args += frag;
        this.completion += frag;
      }
    }
    if (typeof choice.finish_reason === 'string') {
      this.finish = finishOf(choice.finish_reason);
      this.finished = true;
      bytes += this.flushCalls();
    }
    return bytes;
  }

  private flushCalls(): string {
    if (this.callsSent || this.calls.size === 0) return '';
    this.callsSent = true;
    const parts = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c], n) => functionCallPart(c.id ?? callId(this.call, n), c.name, parseArgs(c.args)));
    return this.out.parts(parts);
  }

  end(settled: Parameters<StreamTranslator['end']>[0]): string {
    return this.flushCalls() + this.out.end(this.finish, settled);
  }
}

export const geminiToOpenai = (opts: GeminiClientOptions): Translator => ({
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    const { body, dropped } = buildRequest(req, call);
    return { body: JSON.stringify(body), ...droppedOf(dropped) };
  },
  response: (text, call) => response(text, call, opts.includeThoughts),
  stream: (call) => new OpenaiStream(call, opts.framing, opts.includeThoughts),
  error: (status, text) => geminiError(status, text, nestedMessage),
});

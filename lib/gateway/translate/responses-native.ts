// A Responses request passed to a native Responses upstream (an OpenAI channel with
// `responses: true`): the client's bytes go upstream (only `model` may change, on fallback), the
// upstream's Response object and stream events come back as they came. Usage is read from the
// Response's `usage` (a stream's terminal event); the gateway's `service` member is spliced into
// the Response object, and the stream's terminal event is held back until the cost is known.
import type { Responses } from '@/lib/gateway/translate/wire';
import { upstreamObject } from '@/lib/gateway/translate/upstream-json';
import { isObject } from '@/lib/gateway/translate/wire/json';
import { responsesUsage } from '@/lib/gateway/translate/usage';
import { builtInToolOf, type ToolCalls } from '@/lib/billing/tools';
import { maxCalls } from '@/lib/gateway/builtin-tools';
import { upstreamBody, type JsonBody } from '@/lib/gateway/body';
import { SEALED_PREFIX } from '@/lib/gateway/translate/reasoning-seal';
import { UpstreamFailure } from '@/lib/gateway/upstream';
import { serviceMember } from '@/lib/gateway/translate/openai-client';
import { chatMessagesOf, type ChatMessage, type ResponsesTurn } from '@/lib/gateway/translate/responses-chat';
import type { JsonObject, Settlement, StreamTranslator, TranslatedError, TranslatedReply, Translator, UpstreamUsage } from '@/lib/gateway/translate/types';

/**
 * Built-in tool calls among a Response's output items: one per web search, file search or image
 * generation call; code interpreter calls by container (its price is per container).
 */
export function responsesToolCalls(output: unknown): ToolCalls {
  const calls: ToolCalls = {};
  if (!Array.isArray(output)) return calls;
  const containers = new Set<unknown>();
  for (const item of output) countToolCall(calls, containers, item);
  return calls;
}

function countToolCall(calls: ToolCalls, containers: Set<unknown>, item: unknown): void {
  if (!isObject(item) || typeof item.type !== 'string' || !item.type.endsWith('_call')) return;
  if (item.type === 'code_interpreter_call') {
    containers.add(item.container_id ?? item.id);
    calls.code_interpreter = containers.size;
    return;
  }
  const tool = builtInToolOf(item.type.slice(0, -'_call'.length));
  if (tool) calls[tool] = (calls[tool] ?? 0) + 1;
}

/** Generated text of output items (message text, call arguments, reasoning summaries): what an estimate counts. */
function outputText(output: unknown): string {
  if (!Array.isArray(output)) return '';
  let text = '';
  for (const item of output) {
    if (!isObject(item)) continue;
    if (typeof item.arguments === 'string') text += item.arguments;
    for (const list of [item.content, item.summary]) {
      if (!Array.isArray(list)) continue;
      for (const part of list) if (isObject(part) && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}

/**
 * The conversation through a natively served turn, as chat messages (what a later
 * `previous_response_id` over a translated channel continues from). Input and output items the
 * chat shape cannot hold (built-in tool calls and their results) are left out.
 */
function nativeConversation(rt: ResponsesTurn, response: JsonObject): ChatMessage[] {
  // A passed-through request used no stored state of ours: its conversation starts with its input.
  const out: ChatMessage[] = [];
  const input = typeof rt.body.input === 'string' ? [rt.body.input] : Array.isArray(rt.body.input) ? rt.body.input : [];
  for (const item of input) {
    try {
      out.push(...chatMessagesOf(typeof item === 'string' ? item : [item]));
    } catch {
      /* an item only the native upstream understands */
    }
  }
  let text = '';
  const calls: JsonObject[] = [];
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isObject(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) if (isObject(part) && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    } else if (item.type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' } });
    }
  }
  const assistant: ChatMessage = { role: 'assistant', content: text || (calls.length > 0 ? null : '') };
  if (calls.length > 0) assistant.tool_calls = calls;
  out.push(assistant);
  return out;
}

/** The ids of a Response's output items (at most a few hundred are kept: they index item_reference lookups). */
function outputIds(response: JsonObject): string[] {
  const ids: string[] = [];
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (isObject(item) && typeof item.id === 'string' && item.id.length <= 128) ids.push(item.id);
    if (ids.length >= 256) break;
  }
  return ids;
}

/** The Response object's JSON text with the gateway's `service` member (cost as a bare JSON number) last. */
export function withService(response: JsonObject, settled: Settlement): string {
  const { service: _theirs, ...rest } = response;
  const json = JSON.stringify(rest);
  return `${json.slice(0, -1)},"service":${serviceMember(settled)}}`;
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

class NativeStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  /** Counted from output items as they are added (billed even if the stream breaks before its end), then from the terminal Response. */
  toolCalls: ToolCalls | undefined = undefined;
  private readonly added: ToolCalls = {};
  private readonly containers = new Set<unknown>();
  /** The terminal event, held until the cost is known. */
  private terminal: { type: string; seq: number; response: JsonObject } | null = null;

  constructor(private readonly rt: ResponsesTurn) {}

  push(ev: { event: string; data: string; raw: string }): string {
    const data = ev.data;
    if (data === '' || data === '[DONE]') return '';
    const parsed = upstreamObject<Responses.ResponsesStreamEvent>(data, 'the stream');
    const type = typeof parsed.type === 'string' ? parsed.type : ev.event;
    if (type === 'error') throw new UpstreamFailure('status', `upstream stream error: ${JSON.stringify(parsed.error ?? parsed).slice(0, 200)}`);
    const seq = typeof parsed.sequence_number === 'number' ? parsed.sequence_number : undefined;
    if (seq !== undefined) this.rt.sequence = Math.max(this.rt.sequence ?? 0, seq + 1);
    if (
      typeof parsed.delta === 'string' &&
      (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta' || type === 'response.reasoning_summary_text.delta')
    ) {
      this.completion += parsed.delta;
    }
    if (type === 'response.output_item.added') {
      countToolCall(this.added, this.containers, parsed.item);
      this.toolCalls = maxCalls(this.toolCalls, this.added);
    }
    if (TERMINAL.has(type) && isObject(parsed.response)) {
      this.usage = responsesUsage(parsed.response.usage, parsed.response.service_tier) ?? this.usage;
      this.toolCalls = maxCalls(this.toolCalls, responsesToolCalls(parsed.response.output));
      this.finished = true;
      this.terminal = { type, seq: seq ?? this.rt.sequence ?? 0, response: parsed.response };
      return '';
    }
    return ev.raw;
  }

  end(settled: Settlement): string {
    const t = this.terminal;
    if (!t) return '';
    const text = withService(t.response, settled);
    if (typeof t.response.id === 'string')
      this.rt.onFinish({ id: t.response.id, text, conversation: nativeConversation(this.rt, t.response), itemIds: outputIds(t.response) });
    return `event: ${t.type}\ndata: {"type":${JSON.stringify(t.type)},"sequence_number":${t.seq},"response":${text}}\n\n`;
  }
}

/**
 * The client's bytes for a native channel (`model` set), less the reasoning items the gateway
 * sealed on a translated turn: OpenAI cannot open them (it refuses reasoning it did not encrypt).
 */
export function nativeBody(body: JsonBody, model: string): string | Buffer {
  // `service` (region, task) is the gateway's and never goes upstream.
  const members: Record<string, unknown> = { model, service: undefined };
  const input = body.json.input;
  if (Array.isArray(input) && body.text.includes(`"${SEALED_PREFIX}`)) {
    const kept = input.filter(
      (i) => !(isObject(i) && i.type === 'reasoning' && typeof i.encrypted_content === 'string' && i.encrypted_content.startsWith(SEALED_PREFIX)),
    );
    if (kept.length !== input.length) members.input = kept;
  }
  return upstreamBody(body, members);
}

/** The pass-through translator of one Responses request to native Responses channels. */
export function nativeResponsesTranslator(rt: ResponsesTurn): Translator {
  return {
    request: (req, call) => ({ body: nativeBody(req.body, call.model.name), operation: 'responses' }),

    response(text): TranslatedReply {
      const parsed = nativeReply(text, 'a Response object');
      if (parsed.object !== 'response') throw new UpstreamFailure('protocol', 'upstream reply is not a Response object');
      return {
        usage: responsesUsage(parsed.usage, parsed.service_tier),
        completion: outputText(parsed.output),
        toolCalls: responsesToolCalls(parsed.output),
        render(settled) {
          const end = text.lastIndexOf('}');
          // The upstream's bytes as they came, our `service` member spliced in before the closing brace.
          const body = parsed.service === undefined && end > 0 ? `${text.slice(0, end)},"service":${serviceMember(settled)}}` : withService(parsed, settled);
          if (typeof parsed.id === 'string')
            rt.onFinish({ id: parsed.id, text: body, conversation: nativeConversation(rt, parsed), itemIds: outputIds(parsed) });
          return body;
        },
      };
    },

    stream: () => new NativeStream(rt),

    error: nativeError,
  };
}

/** A native upstream's JSON reply with its `output` list; anything else is the channel's failure. */
export function nativeReply(text: string, what: string): JsonObject {
  const parsed = upstreamObject<Responses.ResponseObject>(text, 'the reply');
  if (!Array.isArray(parsed.output)) throw new UpstreamFailure('protocol', `upstream reply is not ${what}`);
  return parsed;
}

/** The caller's mistake as a native upstream saw it: its status and body (already OpenAI's envelope). */
export function nativeError(status: number, text: string): TranslatedError {
  return {
    status,
    body: text || JSON.stringify({ error: { message: `upstream answered ${status}`, type: 'invalid_request_error', param: null, code: 'upstream_rejected' } }),
  };
}

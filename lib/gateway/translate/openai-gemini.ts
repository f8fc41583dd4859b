// OpenAI chat client -> Gemini upstream (POST {base}/v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse). The mapping choices are listed in docs/protocols.md (Unified
// protocols); the comments here say why where it is not obvious.
import type { Gemini } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { mimeOfUrl } from '@/lib/gateway/translate/gemini-reply';
import { geminiUsage } from '@/lib/gateway/translate/usage';
import type { ModelInfo } from '@/lib/config';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { geminiSchema, schemaBudget } from '@/lib/gateway/translate/gemini-schema';
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
import { soleElement, upstreamObject } from '@/lib/gateway/translate/upstream-json';

/** thinkingBudget for OpenAI's reasoning_effort (Gemini 2.5 Flash takes 0..24576, Pro 128..32768). */
export const GEMINI_THINKING_BUDGETS = { low: 1024, medium: 8192, high: 24576 } as const;

/**
 * Gemini 3 refuses a replayed functionCall without the thought signature it came with. The real
 * one travels to the client on the tool call (`extra_content.google.thought_signature`, as on
 * Google's own OpenAI-compatible endpoint); a client that did not send it back gets Google's
 * documented placeholder instead.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

type Part = Gemini.GeminiPart;
/** A part of a reply, as received. */
type ReceivedPart = Received<Gemini.GeminiPart>;
type Content = Gemini.GeminiContent & { role: 'user' | 'model' };

const CALLING_MODE: Record<'auto' | 'none' | 'required' | 'named', Gemini.FunctionCallingConfig['mode']> = {
  auto: 'AUTO',
  none: 'NONE',
  required: 'ANY',
  named: 'ANY',
};

// ---------------------------------------------------------------------------------------------
// Request

function userParts(content: unknown, param: string, model: ModelInfo): Part[] {
  const parts: Part[] = [];
  for (const part of contentParts(content, param, model)) {
    if (part.kind === 'text') {
      if (part.text !== '') parts.push({ text: part.text });
    } else if (part.kind === 'inline') parts.push({ inlineData: { mimeType: part.mediaType, data: part.data } });
    else parts.push({ fileData: { mimeType: mimeOfUrl(part.url), fileUri: part.url } });
  }
  return parts;
}

function thoughtSignatureOf(raw: JsonObject): string | undefined {
  const extra = raw.extra_content;
  const google = isObject(extra) ? extra.google : undefined;
  const signature = isObject(google) ? google.thought_signature : undefined;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

/** A tool message's content as Gemini's functionResponse.response (an object): a JSON object as it is, else {content}. */
function functionResponse(text: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // plain text
  }
  return { content: text };
}

function conversation(body: JsonObject, model: ModelInfo): { system: Part[]; contents: Content[] } {
  const list = body.messages;
  if (!Array.isArray(list) || list.length === 0) throw invalidParam('messages', '`messages` must be a non-empty array.');
  const system: Part[] = [];
  const contents: Content[] = [];
  // Gemini's function results carry the function's name, not a call id.
  const nameById = new Map<string, string>();
  // Consecutive turns of one role join (tool results after tool results, most of all).
  const add = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  list.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw invalidParam(at, `\`${at}\` must be an object.`);
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = textContent(m.content, `${at}.content`);
        if (text !== '') system.push({ text });
        break;
      }
      case 'user':
        add('user', userParts(m.content, `${at}.content`, model));
        break;
      case 'assistant': {
        const parts: Part[] = [];
        const text = textContent(m.content, `${at}.content`);
        if (text !== '') parts.push({ text });
        const calls = historyToolCalls(m, at);
        const signed = calls.some((c) => thoughtSignatureOf(c.raw) !== undefined);
        calls.forEach((c, k) => {
          nameById.set(c.id, c.name);
          const signature = thoughtSignatureOf(c.raw) ?? (!signed && k === 0 ? SKIP_THOUGHT_SIGNATURE : undefined);
          parts.push({ functionCall: { name: c.name, args: c.args }, ...(signature ? { thoughtSignature: signature } : {}) });
        });
        add('model', parts);
        break;
      }
      case 'tool': {
        const id = m.tool_call_id;
        const name = typeof id === 'string' ? nameById.get(id) : undefined;
        if (name === undefined) throw invalidParam(`${at}.tool_call_id`, `\`${at}.tool_call_id\` must name a tool call of an earlier assistant message.`);
        add('user', [{ functionResponse: { name, response: functionResponse(textContent(m.content, `${at}.content`)) } }]);
        break;
      }
      default:
        throw invalidParam(
          `${at}.role`,
          `\`${at}.role\` ${JSON.stringify(m.role)} cannot be sent to ${model.name}: use system, developer, user, assistant or tool.`,
        );
    }
  });
  // A conversation of system messages only (which OpenAI answers) has no turn for Gemini: it becomes the user's.
  if (contents.length === 0 && system.length > 0) return { system: [], contents: [{ role: 'user', parts: system }] };
  return { system, contents };
}

function thinkingConfig(body: JsonObject, maxTokens: number): Gemini.GenerationConfig['thinkingConfig'] {
  const effort = reasoningEffort(body);
  if (effort === undefined) return undefined;
  if (effort === 'none' || effort === 'minimal') return { thinkingBudget: 0 };
  // Gemini counts thinking inside maxOutputTokens.
  return { thinkingBudget: Math.min(GEMINI_THINKING_BUDGETS[effort], maxTokens), includeThoughts: true };
}

function buildRequest(req: ClientRequest, call: CallInfo): Gemini.GeminiRequest {
  const body = req.body.json;
  const model = call.model;
  refuseUnsupported(body, model);
  const maxTokens = maxOutputTokens(body, model);
  const { system, contents } = conversation(body, model);
  const out: Gemini.GeminiRequest = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };

  const tools = functionTools(body, model);
  // One budget for all the request's schemas (gemini-schema.ts): their inlined size is bounded together.
  const budget = schemaBudget();
  if (tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: tools.map((t, i) => {
          const parameters = t.parameters ? geminiSchema(t.parameters, `tools[${i}].function.parameters`, budget) : undefined;
          return {
            name: t.name,
            ...(t.description !== undefined ? { description: t.description } : {}),
            // A function without arguments is declared without parameters (Gemini refuses an empty object schema).
            ...(parameters && parameters.properties ? { parameters } : {}),
          };
        }),
      },
    ];
    const choice = toolChoice(body);
    if (choice) {
      const mode = CALLING_MODE[choice.mode];
      out.toolConfig = { functionCallingConfig: { mode, ...(choice.mode === 'named' ? { allowedFunctionNames: [choice.name] } : {}) } };
    }
  }

  const config: Gemini.GenerationConfig = {};
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  config.maxOutputTokens = maxTokens;
  const stop = stopSequences(body);
  if (stop) config.stopSequences = stop;
  if (typeof body.presence_penalty === 'number') config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') config.frequencyPenalty = body.frequency_penalty;
  if (typeof body.seed === 'number' && Number.isInteger(body.seed)) config.seed = body.seed;
  const format = responseFormat(body);
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema' && format.schema) config.responseSchema = geminiSchema(format.schema, 'response_format.json_schema.schema', budget);
  }
  const thinking = thinkingConfig(body, maxTokens);
  if (thinking) config.thinkingConfig = thinking;
  out.generationConfig = config;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replies

function finishReason(reason: unknown, toolCalls: number): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    default:
      // STOP (also the end of a function-call reply), MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE.
      return toolCalls > 0 ? 'tool_calls' : 'stop';
  }
}

// Gemini answers some failures as a one-element array.
/** A GenerateContentResponse (a reply or stream event) as received. */
const parseJson = (text: string, what: string) => upstreamObject<Gemini.GeminiResponse>(text, what, soleElement);

function upstreamError(data: JsonObject): UpstreamFailure {
  const err = isObject(data.error) ? data.error : {};
  const status = typeof err.status === 'string' ? err.status : 'error';
  const message = typeof err.message === 'string' ? err.message : '';
  return new UpstreamFailure(
    'status',
    `upstream stream error: ${status}${message ? `: ${message.slice(0, 200)}` : ''}`,
    typeof err.code === 'number' ? err.code : undefined,
  );
}

/** The first candidate (n is 1) and whether the prompt itself was blocked. */
function candidateOf(data: JsonObject): { candidate: JsonObject | undefined; blocked: boolean } {
  const candidate = Array.isArray(data.candidates) ? data.candidates.find(isObject) : undefined;
  const feedback = isObject(data.promptFeedback) ? data.promptFeedback : {};
  return { candidate, blocked: !candidate && typeof feedback.blockReason === 'string' };
}

const partsOf = (candidate: JsonObject | undefined): ReceivedPart[] => {
  const content = candidate && isObject(candidate.content) ? candidate.content : undefined;
  return content && Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
};

const toolCallId = (call: CallInfo, n: number) => `call_${call.requestId}_${n}`;

function toolCallOf(part: ReceivedPart, call: CallInfo, n: number): ReplyToolCall | undefined {
  const fn = part.functionCall;
  if (!isObject(fn) || typeof fn.name !== 'string') return undefined;
  const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
  return {
    id: toolCallId(call, n),
    name: fn.name,
    arguments: JSON.stringify(isObject(fn.args) ? fn.args : {}),
    ...(signature ? { extra: { extra_content: { google: { thought_signature: signature } } } } : {}),
  };
}

function response(text: string, call: CallInfo) {
  const data = parseJson(text, 'the reply');
  if (isObject(data.error)) throw upstreamError(data);
  const { candidate, blocked } = candidateOf(data);
  if (!candidate && !blocked) throw new UpstreamFailure('protocol', 'upstream reply has no candidates');
  let content = '';
  let reasoning = '';
  let sawText = false;
  const toolCalls: ReplyToolCall[] = [];
  for (const part of partsOf(candidate)) {
    const tool = toolCallOf(part, call, toolCalls.length);
    if (tool) toolCalls.push(tool);
    else if (typeof part.text === 'string') {
      if (part.thought === true) reasoning += part.text;
      else {
        content += part.text;
        sawText = true;
      }
    }
  }
  const finish = blocked ? 'content_filter' : finishReason(candidate?.finishReason, toolCalls.length);
  const message = { content: sawText || toolCalls.length === 0 ? content : null, reasoning, toolCalls };
  return {
    usage: geminiUsage(data.usageMetadata, true),
    completion: reasoning + content + toolCalls.map((t) => t.arguments).join(''),
    render: (settled: Settlement) => renderCompletion(call, message, finish, settled),
  };
}

class GeminiStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: ChunkWriter;
  private readonly withUsage: boolean;

  constructor(
    private readonly call: CallInfo,
    req: ClientRequest,
  ) {
    this.out = new ChunkWriter(call);
    this.withUsage = wantsStreamUsage(req);
  }

  push(ev: SseEvent): string {
    if (ev.data === '') return '';
    const data = parseJson(ev.data, 'the stream');
    if (isObject(data.error)) throw upstreamError(data);
    const usage = geminiUsage(data.usageMetadata, this.finished);
    let out = '';
    const { candidate, blocked } = candidateOf(data);
    for (const part of partsOf(candidate)) {
      const tool = toolCallOf(part, this.call, this.out.toolCalls);
      if (tool) {
        // Gemini sends a call whole: its first delta, then all its arguments as one fragment.
        const started = this.out.toolCallStart(tool.id, tool.name, tool.extra);
        out += started.out + this.out.toolCallArguments(started.index, tool.arguments);
        this.completion += tool.arguments;
      } else if (typeof part.text === 'string' && part.text !== '') {
        this.completion += part.text;
        out += part.thought === true ? this.out.reasoning(part.text) : this.out.content(part.text);
      }
    }
    const reason = candidate?.finishReason;
    if (!this.finished && (blocked || (typeof reason === 'string' && reason !== '' && reason !== 'FINISH_REASON_UNSPECIFIED'))) {
      this.finished = true;
      out += this.out.finish(blocked ? 'content_filter' : finishReason(reason, this.out.toolCalls));
    }
    // Cumulative: the latest report counts, final once the candidate has finished.
    if (usage) this.usage = { ...usage, completionFinal: this.finished };
    return out;
  }

  end(settled: Settlement): string {
    return this.out.end(settled, this.withUsage);
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

function error(status: number, text: string) {
  try {
    let parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.length === 1) parsed = parsed[0];
    if (isObject(parsed) && isObject(parsed.error) && typeof parsed.error.message === 'string') {
      const code = typeof parsed.error.status === 'string' ? parsed.error.status.toLowerCase() : null;
      return openaiError(status, parsed.error.message, code);
    }
  } catch {
    // not JSON: quoted below
  }
  return openaiError(status, errorSnippet(text, status), null);
}

export const openaiToGemini: Translator = {
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    return { body: JSON.stringify(buildRequest(req, call)) };
  },
  response,
  stream: (call, req) => new GeminiStream(call, req),
  error,
};

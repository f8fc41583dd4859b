// Anthropic Messages client -> Gemini upstream (generateContent / streamGenerateContent?alt=sse).
// The mapping choices are listed in docs/protocols.md ("Anthropic Messages clients on OpenAI and Gemini
// models"); the protocol facts in translation.md.
import type { Anthropic, Gemini } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { mimeOfUrl } from '@/lib/gateway/translate/gemini-reply';
import { geminiUsage } from '@/lib/gateway/translate/usage';
import type { ModelInfo } from '@/lib/config';
import type { JsonObject } from '@/lib/gateway/body';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import {
  AnthropicEventWriter,
  anthropicError,
  anthropicMessage,
  anthropicUsage,
  checkForcedTool,
  documentOf,
  dropAnthropicOnly,
  imageOf,
  jsonFormatOf,
  maxTokensOf,
  notSupported,
  numberOf,
  refuseBlock,
  refusePlatformMembers,
  stopSequencesOf,
  systemTexts,
  systemTurnText,
  leadingSystemTurns,
  textOfBlock,
  thinkingOf,
  toolChoiceOf,
  toolResultOf,
  toolsOf,
  toolUseId,
  toolUseOf,
  turnsOf,
  type Effort,
  type ImageRef,
  type StopReason,
} from './anthropic-client';
import { DropRecord } from './dropped';
import { eventData, soleElement, upstreamObject } from './upstream-json';
import type { CallInfo, ClientRequest, SseEvent, StreamTranslator, TranslatedReply, Translator, UpstreamCall, UpstreamUsage } from './types';

/**
 * Gemini's thoughtSignature travels to the client as a thinking block's signature behind this
 * prefix, and comes back to Gemini from there; a signature without it (Claude's own, or the empty
 * one of a translated OpenAI reply) is never sent to Gemini, which would fail to decode it.
 */
export const GEMINI_SIGNATURE_PREFIX = 'gemini:';

/**
 * Google's documented stand-in for a function call whose thoughtSignature is unknown (history
 * written by another model): Gemini 3 refuses a replayed function call without one.
 */
const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** The largest thinkingBudget every Gemini 2.5 model takes (Flash's ceiling; Pro's is 32,768). */
const MAX_THINKING_BUDGET = 24576;

/** thinkingBudget for an Anthropic effort level (adaptive thinking with output_config.effort). */
const EFFORT_BUDGET: Record<Effort, number> = { low: 4096, medium: 12288, high: 24576 };

// ---------------------------------------------------------------------------------------------
// Request

function imagePart(img: ImageRef): Gemini.GeminiPart {
  if (img.kind === 'base64') return { inlineData: { mimeType: img.mediaType, data: img.data } };
  return { fileData: { mimeType: mimeOfUrl(img.url), fileUri: img.url } };
}

type Content = Gemini.GeminiContent & { role: 'user' | 'model' };

/**
 * The contents, and the texts of the system messages that open the conversation (for
 * systemInstruction). A later system message becomes user text in its place: Gemini has no system
 * turn, and moving it into systemInstruction would lose where it stood.
 */
function buildContents(body: JsonObject, model: ModelInfo, drops: DropRecord): { contents: Content[]; leadingSystem: string[] } {
  const contents: Content[] = [];
  const turns = turnsOf(body, drops);
  const leading = leadingSystemTurns(turns);
  // Gemini answers a function call with the function's name, not an id: the names of the calls so far.
  const callNames = new Map<string, string>();
  for (const turn of turns.slice(leading)) {
    const parts: Gemini.GeminiPart[] = [];
    if (turn.role === 'system') parts.push({ text: systemTurnText(turn) });
    else if (turn.role === 'user') {
      const responses: Gemini.GeminiPart[] = [];
      const toolImages: Gemini.GeminiPart[] = [];
      turn.blocks.forEach((b, j) => {
        const param = `${turn.param}.content.${j}`;
        if (b.type === 'text') parts.push({ text: textOfBlock(b, param) });
        else if (b.type === 'image') parts.push(imagePart(imageOf(b, param, model)));
        else if (b.type === 'document') {
          const doc = documentOf(b, param, model);
          parts.push(doc.kind === 'text' ? { text: doc.text } : { inlineData: { mimeType: 'application/pdf', data: doc.data } });
        } else if (b.type === 'tool_result') {
          const r = toolResultOf(b, param, model);
          const name = callNames.get(r.toolUseId);
          if (name === undefined) {
            throw notSupported(
              `${param}.tool_use_id`,
              model,
              `no earlier tool_use block has the id "${r.toolUseId}", and Gemini answers a call by its function's name.`,
            );
          }
          const text = r.texts.join('\n');
          responses.push({ functionResponse: { name, response: r.isError ? { error: text } : { result: text } } });
          toolImages.push(...r.images.map(imagePart));
        } else refuseBlock(b, param, model);
      });
      parts.unshift(...responses, ...toolImages);
    } else {
      // A signature (ours, behind the prefix) belongs to the function call that follows it; a
      // turn's first function call without one gets Google's stand-in.
      let signature: string | undefined;
      let firstCall = true;
      turn.blocks.forEach((b, j) => {
        const param = `${turn.param}.content.${j}`;
        if (b.type === 'text') parts.push({ text: textOfBlock(b, param) });
        else if (b.type === 'thinking') {
          if (typeof b.signature === 'string' && b.signature.startsWith(GEMINI_SIGNATURE_PREFIX)) signature = b.signature.slice(GEMINI_SIGNATURE_PREFIX.length);
        } else if (b.type === 'tool_use') {
          const t = toolUseOf(b, param);
          callNames.set(t.id, t.name);
          const part: Gemini.GeminiPart = { functionCall: { name: t.name, args: t.input } };
          const sig = signature ?? (firstCall ? SKIP_SIGNATURE : undefined);
          if (sig !== undefined) part.thoughtSignature = sig;
          signature = undefined;
          firstCall = false;
          parts.push(part);
        } else if (b.type !== 'redacted_thinking') refuseBlock(b, param, model);
      });
    }
    if (parts.length === 0) continue;
    const role = turn.role === 'assistant' ? 'model' : 'user';
    // Consecutive turns of one role (Anthropic allows them) become one content.
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return { contents, leadingSystem: turns.slice(0, leading).map(systemTurnText) };
}

function buildRequest(req: ClientRequest, call: CallInfo, drops: DropRecord): Gemini.GeminiRequest {
  const body = req.body.json;
  const model = call.model;
  refusePlatformMembers(body, model);
  dropAnthropicOnly(body, drops);
  const { contents, leadingSystem } = buildContents(body, model, drops);
  const out: Gemini.GeminiRequest = { contents };
  const system = [...systemTexts(body), ...leadingSystem];
  if (system.length > 0) out.systemInstruction = { parts: system.map((text) => ({ text })) };

  const tools = toolsOf(body, model, drops);
  const choice = toolChoiceOf(body);
  checkForcedTool(choice, tools, model);
  if (tools.length > 0) {
    // parametersJsonSchema takes the JSON Schema as clients write it ($schema,
    // additionalProperties...), which the OpenAPI-subset `parameters` refuses.
    out.tools = [
      {
        functionDeclarations: tools.map((t) => {
          const fn: Gemini.FunctionDeclaration = { name: t.name };
          if (t.description !== undefined) fn.description = t.description;
          fn.parametersJsonSchema = t.schema;
          return fn;
        }),
      },
    ];
    if (choice) {
      if (choice.disableParallel) drops.add('tool_choice.disable_parallel_tool_use'); // no Gemini equivalent
      const mode = choice.mode === 'auto' ? 'AUTO' : choice.mode === 'none' ? 'NONE' : 'ANY';
      const cfg: Gemini.FunctionCallingConfig = { mode };
      if (choice.mode === 'tool') cfg.allowedFunctionNames = [choice.name];
      out.toolConfig = { functionCallingConfig: cfg };
    }
  }

  const gen: Gemini.GenerationConfig = {};
  const maxTokens = maxTokensOf(body, model);
  if (maxTokens !== undefined) gen.maxOutputTokens = maxTokens;
  const temperature = numberOf(body, 'temperature');
  if (temperature !== undefined) gen.temperature = temperature;
  const topP = numberOf(body, 'top_p');
  if (topP !== undefined) gen.topP = topP;
  const topK = numberOf(body, 'top_k');
  if (topK !== undefined) gen.topK = topK;
  const stop = stopSequencesOf(body);
  if (stop) gen.stopSequences = stop;
  const schema = jsonFormatOf(body);
  if (schema) {
    gen.responseMimeType = 'application/json';
    gen.responseJsonSchema = schema;
  }
  const thinking = thinkingOf(body);
  if (thinking.enabled) {
    // -1: Gemini's dynamic thinking, the nearest to Anthropic's adaptive mode.
    const budget =
      thinking.budgetTokens !== undefined ? Math.min(thinking.budgetTokens, MAX_THINKING_BUDGET) : thinking.effort ? EFFORT_BUDGET[thinking.effort] : -1;
    // display "omitted": no thought text asked for (signatures still come, on function calls).
    gen.thinkingConfig = thinking.omitText ? { thinkingBudget: budget } : { thinkingBudget: budget, includeThoughts: true };
  } else if (thinking.effort) gen.thinkingConfig = { thinkingBudget: EFFORT_BUDGET[thinking.effort] };
  if (Object.keys(gen).length > 0) out.generationConfig = gen;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Replies

const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT']);

function stopReasonOf(finish: unknown, hasToolCalls: boolean, blocked: boolean): StopReason {
  if (blocked || (typeof finish === 'string' && REFUSALS.has(finish))) return 'refusal';
  if (finish === 'MAX_TOKENS') return 'max_tokens';
  return hasToolCalls ? 'tool_use' : 'end_turn';
}

function parseReply(text: string): Received<Gemini.GeminiResponse> {
  const parsed = upstreamObject<Gemini.GeminiResponse>(text, 'the reply', soleElement);
  if (parsed.error !== undefined && parsed.error !== null) {
    throw new UpstreamFailure('status', `upstream answered an error: ${JSON.stringify(parsed.error).slice(0, 300)}`);
  }
  return parsed;
}

/** The first candidate, and whether the prompt itself was blocked (no candidate, a blockReason). */
function candidateOf(reply: JsonObject): { candidate: JsonObject | undefined; blocked: boolean } {
  const candidate = Array.isArray(reply.candidates) ? reply.candidates.find(isObject) : undefined;
  const feedback = isObject(reply.promptFeedback) ? reply.promptFeedback : {};
  return { candidate, blocked: candidate === undefined && typeof feedback.blockReason === 'string' };
}

function partsOf(candidate: JsonObject | undefined): JsonObject[] {
  const content = candidate && isObject(candidate.content) ? candidate.content : {};
  return Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
}

/** What the parts of a reply say, one sink per block kind (a whole reply and a stream share the reading). */
interface PartSink {
  thinking(text: string): void;
  signature(signature: string): void;
  text(text: string): void;
  toolUse(id: string, name: string, args: JsonObject): void;
}

/**
 * Reads parts in order: thoughts, their signatures (on a thought part or on the function call
 * they lead to), text, whole function calls. A signature on a text part is optional for Gemini
 * and dropped.
 */
function readParts(parts: JsonObject[], sink: PartSink, nextCall: () => string): { completion: string; calls: number } {
  let completion = '';
  let calls = 0;
  for (const p of parts) {
    const sig = typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? GEMINI_SIGNATURE_PREFIX + p.thoughtSignature : undefined;
    if (p.thought === true) {
      if (typeof p.text === 'string' && p.text !== '') {
        sink.thinking(p.text);
        completion += p.text;
      }
      if (sig) sink.signature(sig);
    } else if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      const args = isObject(fc.args) ? fc.args : {};
      if (sig) sink.signature(sig);
      sink.toolUse(typeof fc.id === 'string' && fc.id !== '' ? fc.id : nextCall(), typeof fc.name === 'string' ? fc.name : '', args);
      completion += JSON.stringify(args);
      calls++;
    } else if (typeof p.text === 'string' && p.text !== '') {
      sink.text(p.text);
      completion += p.text;
    }
  }
  return { completion, calls };
}

function response(text: string, call: CallInfo): TranslatedReply {
  const reply = parseReply(text);
  const { candidate, blocked } = candidateOf(reply);
  const content: Anthropic.ContentBlock[] = [];
  const last = () => content.at(-1);
  let n = 0;
  const { completion, calls } = readParts(
    partsOf(candidate),
    {
      thinking(t) {
        const b = last();
        if (b?.type === 'thinking' && b.signature === '') b.thinking += t;
        else content.push({ type: 'thinking', thinking: t, signature: '' });
      },
      signature(s) {
        const b = last();
        if (b?.type === 'thinking' && b.signature === '') b.signature = s;
        else content.push({ type: 'thinking', thinking: '', signature: s });
      },
      text(t) {
        const b = last();
        if (b?.type === 'text') b.text += t;
        else content.push({ type: 'text', text: t });
      },
      toolUse(id, name, input) {
        content.push({ type: 'tool_use', id, name, input });
      },
    },
    () => toolUseId(call, n++),
  );
  const stopReason = stopReasonOf(candidate?.finishReason, calls > 0, blocked);
  return {
    usage: geminiUsage(reply.usageMetadata, true),
    completion,
    render: (settled) => anthropicMessage(call, content, stopReason, null, settled),
  };
}

class GeminiStream implements StreamTranslator {
  usage: UpstreamUsage | null = null;
  completion = '';
  finished = false;
  private readonly out: AnthropicEventWriter;
  private calls = 0;
  private minted = 0;
  private finishReason: unknown = null;
  private blocked = false;

  constructor(private readonly call: CallInfo) {
    this.out = new AnthropicEventWriter(call);
  }

  push(ev: SseEvent): string {
    const data = eventData(ev);
    if (data === '') return '';
    const reply = parseReply(data);
    let bytes = this.out.start();
    // usageMetadata is cumulative on every event: the last one counts.
    this.usage = geminiUsage(reply.usageMetadata, false) ?? this.usage;
    const { candidate, blocked } = candidateOf(reply);
    const w = this.out;
    const read = readParts(
      partsOf(candidate),
      {
        thinking: (t) => (bytes += w.thinking(t)),
        signature: (s) => (bytes += w.signature(s)),
        text: (t) => (bytes += w.text(t)),
        toolUse: (id, name, input) => {
          bytes += w.block({ type: 'tool_use', id, name, input: {} }).bytes;
          bytes += w.delta({ type: 'input_json_delta', partial_json: JSON.stringify(input) });
        },
      },
      () => toolUseId(this.call, this.minted++),
    );
    this.calls += read.calls;
    this.completion += read.completion;
    if (blocked || (candidate && typeof candidate.finishReason === 'string')) {
      this.finishReason = candidate?.finishReason ?? null;
      this.blocked = blocked;
      this.finished = true;
      bytes += w.stop();
    }
    // The output count is final only with the reply: a stream cut before it is estimated.
    if (this.usage) this.usage.completionFinal = this.finished;
    return bytes;
  }

  end(settled: Parameters<StreamTranslator['end']>[0]): string {
    return this.out.finish(stopReasonOf(this.finishReason, this.calls > 0, this.blocked), null, anthropicUsage(settled.usage, settled.toolCalls));
  }
}

function errorMessage(body: unknown): string | undefined {
  const b = Array.isArray(body) ? body[0] : body;
  if (!isObject(b) || !isObject(b.error)) return undefined;
  return typeof b.error.message === 'string' ? b.error.message : undefined;
}

export const anthropicToGemini: Translator = {
  request(req: ClientRequest, call: CallInfo): UpstreamCall {
    const drops = new DropRecord();
    const body = JSON.stringify(buildRequest(req, call, drops));
    return { body, dropped: drops.list() };
  },
  response,
  stream(call: CallInfo): StreamTranslator {
    return new GeminiStream(call);
  },
  error(status: number, text: string) {
    return anthropicError(status, text, errorMessage);
  },
};

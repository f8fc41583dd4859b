// What the Gemini surface (/v1/gemini) needs from every translator whose upstream is not Gemini:
// readers of a generateContent request (the same checks and refusals whatever the upstream) and
// the writers of Google's reply (a GenerateContentResponse whole, or its chunks as SSE or as the
// JSON array Google streams without alt=sse), its usageMetadata and error envelope.
import type { Anthropic, Gemini } from '@/lib/gateway/translate/wire';
import { isObject, type Received } from '@/lib/gateway/translate/wire/json';
import { createHash } from 'node:crypto';
import type { ModelInfo } from '@/lib/config';
import { GatewayError, googleErrorBody } from '@/lib/errors';
import type { JsonObject } from '@/lib/gateway/body';
import { upstreamErrorText } from './anthropic-client';
import type { CallInfo, Settlement, TranslatedError } from './types';

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

/** A 400 for what the upstream of `model` cannot carry, named so the caller can drop it. */
export function notSupported(param: string, model: ModelInfo, why: string): GatewayError {
  return invalid(param, `${param} is not supported by ${model.name}: ${why}`);
}

/**
 * What a Gemini client asked of the reply besides its body: the surface makes one translator per
 * request with these (a whole reply's translator never sees the request).
 */
export interface GeminiClientOptions {
  /** alt=sse, or Google's JSON-array stream. */
  framing: StreamFraming;
  /** thinkingConfig.includeThoughts: thought parts go to the client only when asked for. */
  includeThoughts: boolean;
}

/** Members dropped for an upstream call, where there are any (x-service-dropped and the request log). */
export function droppedOf(dropped: string[]): { dropped?: string[] } {
  return dropped.length > 0 ? { dropped } : {};
}

// ---------------------------------------------------------------------------------------------
// Request readers

/** A part of a client's content, as received: read field by field. */
export type Part = Received<Gemini.GeminiPart>;

export interface GeminiTurn {
  role: 'user' | 'model';
  parts: Part[];
  /** contents.N, for the names in errors */
  param: string;
}

function partsOf(content: unknown, param: string): Part[] {
  if (!isObject(content)) throw invalid(param, `${param}: must be a Content object ({role, parts}).`);
  const parts = content.parts;
  if (!Array.isArray(parts)) throw invalid(`${param}.parts`, `${param}.parts: must be an array of parts.`);
  return parts.map((p, i) => {
    if (!isObject(p)) throw invalid(`${param}.parts.${i}`, `${param}.parts.${i}: must be a Part object.`);
    return p;
  });
}

/** The conversation. A role of "function" (older clients' function results) is the user's. */
export function turnsOf(body: JsonObject): GeminiTurn[] {
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) throw invalid('contents', 'contents: must be a non-empty array of Content objects.');
  return contents.map((c, i) => {
    const param = `contents.${i}`;
    const parts = partsOf(c, param);
    const role = isObject(c) ? c.role : undefined; // partsOf refused a non-object
    if (role === 'model') return { role: 'model', parts, param };
    if (role === undefined || role === null || role === '' || role === 'user' || role === 'function') return { role: 'user', parts, param };
    throw invalid(`${param}.role`, `${param}.role: must be "user" or "model".`);
  });
}

/** systemInstruction's text (a Content, or a bare string as some clients send it); its non-text parts are refused. */
export function systemTextOf(body: JsonObject, model: ModelInfo): string | undefined {
  const si = body.systemInstruction ?? body.system_instruction;
  if (si === undefined || si === null) return undefined;
  if (typeof si === 'string') return si === '' ? undefined : si;
  const texts = partsOf(si, 'systemInstruction').map((p, i) => {
    if (typeof p.text !== 'string') throw notSupported(`systemInstruction.parts.${i}`, model, 'the system instruction takes text parts only.');
    return p.text;
  });
  const text = texts.filter((t) => t !== '').join('\n');
  return text === '' ? undefined : text;
}

export type Media = { kind: 'inline'; mimeType: string; data: string } | { kind: 'file'; mimeType: string; uri: string };

/** inlineData or fileData of a part, or undefined when the part is neither. */
export function mediaOf(p: Part, param: string): Media | undefined {
  const inline = p.inlineData ?? p.inline_data;
  if (inline !== undefined) {
    if (!isObject(inline) || typeof inline.data !== 'string' || typeof inline.mimeType !== 'string') {
      throw invalid(`${param}.inlineData`, `${param}.inlineData: needs mimeType and data (base64) strings.`);
    }
    return { kind: 'inline', mimeType: inline.mimeType, data: inline.data };
  }
  const file = p.fileData ?? p.file_data;
  if (file !== undefined) {
    if (!isObject(file) || typeof file.fileUri !== 'string') throw invalid(`${param}.fileData`, `${param}.fileData: needs a fileUri string.`);
    return { kind: 'file', mimeType: typeof file.mimeType === 'string' ? file.mimeType : '', uri: file.fileUri };
  }
  return undefined;
}

/** A part no other upstream can take (executable code and its results, video metadata, unknown kinds). */
export function refusePart(p: Part, param: string, model: ModelInfo): never {
  const kind = Object.keys(p).find((k) => k !== 'thought' && k !== 'thoughtSignature') ?? 'empty';
  throw notSupported(`${param}.${kind}`, model, `a "${kind}" part can be carried only to a Gemini model.`);
}

/** A thought part (Gemini's own reasoning, replayed): the upstreams read these only through a signature. */
export const isThought = (p: Part): boolean => p.thought === true;

export interface FunctionCallPart {
  id: string;
  name: string;
  args: JsonObject;
  signature?: string;
}

export interface FunctionResponsePart {
  /** The call it answers: its id, or found by name in the model's last turn. */
  callId: string;
  name: string;
  response: unknown;
}

/**
 * A client's call id as OpenAI and Anthropic take it (at most 40 characters of [A-Za-z0-9_-]; Gemini
 * CLI makes its own ids from the function's name and a timestamp): kept when it fits, else a digest.
 */
function upstreamCallId(id: string): string {
  return /^[A-Za-z0-9_-]{1,40}$/.test(id) ? id : `call_${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

/**
 * Pairs function calls and their results. Gemini matches a functionResponse to its call by name
 * (and by `id` when the client kept the one we gave the call); OpenAI and Anthropic want call ids.
 * A call without an id gets one from its position, which the next request derives the same way.
 */
export class CallIds {
  /** Calls of the last model turn not yet answered, oldest first. */
  private open: { id: string; name: string }[] = [];

  call(p: Part, param: string): FunctionCallPart {
    const fc = p.functionCall ?? p.function_call;
    if (!isObject(fc) || typeof fc.name !== 'string' || fc.name === '')
      throw invalid(`${param}.functionCall.name`, `${param}.functionCall.name: must be a non-empty string.`);
    if (fc.args !== undefined && fc.args !== null && !isObject(fc.args))
      throw invalid(`${param}.functionCall.args`, `${param}.functionCall.args: must be an object.`);
    const id = typeof fc.id === 'string' && fc.id !== '' ? upstreamCallId(fc.id) : `call_${param.replace(/[^0-9]+/g, '_')}`;
    this.open.push({ id, name: fc.name });
    const signature = typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;
    return { id, name: fc.name, args: isObject(fc.args) ? fc.args : {}, ...(signature ? { signature } : {}) };
  }

  /** A new model turn: the calls of the one before are answered or abandoned. */
  newTurn(): void {
    this.open = [];
  }

  response(p: Part, param: string): FunctionResponsePart {
    const fr = p.functionResponse ?? p.function_response;
    if (!isObject(fr) || typeof fr.name !== 'string' || fr.name === '') {
      throw invalid(`${param}.functionResponse.name`, `${param}.functionResponse.name: must be a non-empty string.`);
    }
    const name = fr.name;
    const id = typeof fr.id === 'string' && fr.id !== '' ? upstreamCallId(fr.id) : undefined;
    let at = id !== undefined ? this.open.findIndex((c) => c.id === id) : -1;
    if (at < 0) at = this.open.findIndex((c) => c.name === name);
    if (at < 0) {
      throw invalid(
        `${param}.functionResponse`,
        `${param}.functionResponse: answers no functionCall named "${name}" in the model turn before it (OpenAI and Anthropic models need every result paired with its call).`,
      );
    }
    const [matched] = this.open.splice(at, 1);
    return { callId: matched.id, name, response: fr.response ?? {} };
  }
}

/** A function result as text: what OpenAI's tool messages and Anthropic's tool results carry. */
export function responseText(response: unknown): string {
  // {output: "..."} / {content: "..."} (Gemini CLI's and many SDK users' shapes) as the text itself.
  if (isObject(response)) {
    const keys = Object.keys(response);
    if (keys.length === 1 && (keys[0] === 'output' || keys[0] === 'content' || keys[0] === 'result') && typeof response[keys[0]] === 'string') {
      return response[keys[0]] as string;
    }
  }
  return typeof response === 'string' ? response : JSON.stringify(response ?? {});
}

/** Gemini's OpenAPI-style schema (types in capitals, `nullable`) as JSON Schema. */
export function jsonSchemaOf(schema: unknown): JsonObject {
  if (!isObject(schema)) return {};
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'nullable' || k === 'propertyOrdering') continue;
    else if (k === 'properties' && isObject(v)) out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, jsonSchemaOf(s)]));
    else if (k === 'items') out.items = jsonSchemaOf(v);
    else if (k === 'anyOf' && Array.isArray(v)) out.anyOf = v.map(jsonSchemaOf);
    else out[k] = v;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

export interface FunctionDecl {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema; empty properties when the function takes none). */
  schema: JsonObject;
}

export interface ToolsRead {
  functions: FunctionDecl[];
  /** Built-in Google tools (googleSearch, codeExecution, urlContext...): no other upstream runs them. */
  dropped: string[];
}

export function toolsOf(body: JsonObject): ToolsRead {
  const out: ToolsRead = { functions: [], dropped: [] };
  const tools = body.tools;
  if (tools === undefined || tools === null) return out;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools: must be an array of Tool objects.');
  tools.forEach((t, i) => {
    if (!isObject(t)) throw invalid(`tools.${i}`, `tools.${i}: must be a Tool object.`);
    for (const [key, value] of Object.entries(t)) {
      if (key !== 'functionDeclarations' && key !== 'function_declarations') {
        if (!out.dropped.includes(key)) out.dropped.push(key);
        continue;
      }
      if (!Array.isArray(value)) throw invalid(`tools.${i}.functionDeclarations`, `tools.${i}.functionDeclarations: must be an array.`);
      value.forEach((f, j) => {
        const param = `tools.${i}.functionDeclarations.${j}`;
        if (!isObject(f) || typeof f.name !== 'string' || f.name === '') throw invalid(`${param}.name`, `${param}.name: must be a non-empty string.`);
        const given = f.parametersJsonSchema ?? f.parameters_json_schema;
        const schema: JsonObject = isObject(given) ? { ...given } : jsonSchemaOf(f.parameters);
        if (schema.type === undefined) schema.type = 'object';
        if (schema.type === 'object' && !isObject(schema.properties)) schema.properties = {};
        out.functions.push({ name: f.name, ...(typeof f.description === 'string' ? { description: f.description } : {}), schema });
      });
    }
  });
  return out;
}

export interface FunctionCalling {
  mode: 'AUTO' | 'ANY' | 'NONE';
  /** With ANY: the functions the model may call (all when absent). */
  allowed?: string[];
}

export function functionCallingOf(body: JsonObject): FunctionCalling | undefined {
  const tc = body.toolConfig ?? body.tool_config;
  if (tc === undefined || tc === null) return undefined;
  if (!isObject(tc)) throw invalid('toolConfig', 'toolConfig: must be an object.');
  const fcc = tc.functionCallingConfig ?? tc.function_calling_config;
  if (fcc === undefined || fcc === null) return undefined;
  if (!isObject(fcc)) throw invalid('toolConfig.functionCallingConfig', 'toolConfig.functionCallingConfig: must be an object.');
  const mode = fcc.mode ?? 'AUTO';
  // VALIDATED (calls checked against the schemas, text allowed) is what every upstream does under AUTO.
  if (mode !== 'AUTO' && mode !== 'ANY' && mode !== 'NONE' && mode !== 'VALIDATED' && mode !== 'MODE_UNSPECIFIED') {
    throw invalid('toolConfig.functionCallingConfig.mode', 'toolConfig.functionCallingConfig.mode: must be AUTO, ANY, NONE or VALIDATED.');
  }
  const names = fcc.allowedFunctionNames ?? fcc.allowed_function_names;
  if (names !== undefined && names !== null && (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))) {
    throw invalid(
      'toolConfig.functionCallingConfig.allowedFunctionNames',
      'toolConfig.functionCallingConfig.allowedFunctionNames: must be an array of strings.',
    );
  }
  const m = mode === 'ANY' || mode === 'NONE' ? mode : 'AUTO';
  return m === 'ANY' && Array.isArray(names) && names.length > 0 ? { mode: m, allowed: names as string[] } : { mode: m };
}

/** The function declarations that `calling` leaves the model (ANY with allowedFunctionNames narrows them). */
export function callableFunctions(functions: FunctionDecl[], calling: FunctionCalling | undefined): FunctionDecl[] {
  if (!calling?.allowed) return functions;
  for (const name of calling.allowed) {
    if (!functions.some((f) => f.name === name)) {
      throw invalid(
        'toolConfig.functionCallingConfig.allowedFunctionNames',
        `toolConfig.functionCallingConfig.allowedFunctionNames: "${name}" is not a declared function.`,
      );
    }
  }
  return functions.filter((f) => calling.allowed!.includes(f.name));
}

export interface Thinking {
  /** thinkingBudget: 0 off, -1 dynamic (the model decides), else tokens. */
  budget?: number;
  /** thinkingLevel of Gemini 3 (minimal, low, medium, high). */
  level?: 'minimal' | 'low' | 'medium' | 'high';
  /** Thoughts are returned to the client only when asked for (includeThoughts), as on Gemini. */
  include: boolean;
}

export interface GenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  /** responseMimeType application/json (with a JSON Schema when one was given). */
  json?: { schema?: JsonObject };
  thinking: Thinking;
  /** Members no other upstream has an equivalent for, dropped (named for x-service-dropped). */
  dropped: string[];
}

function num(cfg: JsonObject, field: string, min: number, max: number): number | undefined {
  const v = cfg[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw invalid(`generationConfig.${field}`, `generationConfig.${field}: must be a number from ${min} to ${max}.`);
  }
  return v;
}

function int(cfg: JsonObject, field: string, min: number): number | undefined {
  const v = num(cfg, field, min, Number.MAX_SAFE_INTEGER);
  if (v !== undefined && !Number.isInteger(v)) throw invalid(`generationConfig.${field}`, `generationConfig.${field}: must be an integer.`);
  return v;
}

const CONFIG_KNOWN = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  '_responseJsonSchema',
  'thinkingConfig',
  'candidateCount',
]);

export function generationConfigOf(body: JsonObject, model: ModelInfo): GenerationConfig {
  const out: GenerationConfig = { thinking: { include: false }, dropped: [] };
  const cfg = body.generationConfig ?? body.generation_config;
  if (cfg === undefined || cfg === null) return out;
  if (!isObject(cfg)) throw invalid('generationConfig', 'generationConfig: must be an object.');
  out.temperature = num(cfg, 'temperature', 0, 2);
  out.topP = num(cfg, 'topP', 0, 1);
  out.topK = int(cfg, 'topK', 1);
  out.maxOutputTokens = int(cfg, 'maxOutputTokens', 1);
  out.presencePenalty = num(cfg, 'presencePenalty', -2, 2);
  out.frequencyPenalty = num(cfg, 'frequencyPenalty', -2, 2);
  out.seed = int(cfg, 'seed', -Number.MAX_SAFE_INTEGER);
  const stop = cfg.stopSequences;
  if (stop !== undefined && stop !== null) {
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string'))
      throw invalid('generationConfig.stopSequences', 'generationConfig.stopSequences: must be an array of strings.');
    if (stop.length > 0) out.stopSequences = stop as string[];
  }
  const candidates = cfg.candidateCount;
  if (candidates !== undefined && candidates !== null && candidates !== 1) {
    throw notSupported('generationConfig.candidateCount', model, 'only one candidate can be generated through this gateway on a model that is not Gemini.');
  }
  const mime = cfg.responseMimeType;
  if (mime === 'application/json') {
    const schema = cfg.responseJsonSchema ?? cfg._responseJsonSchema;
    out.json = isObject(schema) ? { schema } : isObject(cfg.responseSchema) ? { schema: jsonSchemaOf(cfg.responseSchema) } : {};
  } else if (mime !== undefined && mime !== null && mime !== 'text/plain') {
    throw notSupported('generationConfig.responseMimeType', model, 'only text/plain and application/json can be asked of a model that is not Gemini.');
  }
  const tc = cfg.thinkingConfig;
  if (tc !== undefined && tc !== null) {
    if (!isObject(tc)) throw invalid('generationConfig.thinkingConfig', 'generationConfig.thinkingConfig: must be an object.');
    out.thinking.include = tc.includeThoughts === true;
    const budget = tc.thinkingBudget;
    if (budget !== undefined && budget !== null) {
      if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < -1) {
        throw invalid(
          'generationConfig.thinkingConfig.thinkingBudget',
          'generationConfig.thinkingConfig.thinkingBudget: must be -1 (dynamic), 0 (off) or a token count.',
        );
      }
      out.thinking.budget = budget;
    }
    const level = typeof tc.thinkingLevel === 'string' ? tc.thinkingLevel.toLowerCase() : undefined;
    if (level === 'minimal' || level === 'low' || level === 'medium' || level === 'high') out.thinking.level = level;
  }
  for (const key of Object.keys(cfg)) if (!CONFIG_KNOWN.has(key)) out.dropped.push(`generationConfig.${key}`);
  return out;
}

/** Reasoning effort (OpenAI's levels) for a thinking config; undefined leaves the upstream's default. */
export function effortOf(t: Thinking): 'none' | 'minimal' | 'low' | 'medium' | 'high' | undefined {
  if (t.level) return t.level;
  if (t.budget === undefined || t.budget === -1) return undefined;
  if (t.budget === 0) return 'none';
  if (t.budget < 4096) return 'low';
  if (t.budget < 16384) return 'medium';
  return 'high';
}

/** Request members that steer only Google's platform, or that no other upstream knows: tolerated and dropped. */
export function droppedMembers(body: JsonObject, model: ModelInfo): string[] {
  if (body.cachedContent !== undefined && body.cachedContent !== null) {
    throw notSupported('cachedContent', model, 'a context cache lives on Google\u2019s platform; send the contents themselves.');
  }
  const dropped = ['safetySettings', 'labels', 'serviceTier'].filter((k) => body[k] !== undefined && body[k] !== null);
  // Members added to the API later: no upstream but Gemini knows them, so they are named too.
  for (const k of Object.keys(body)) if (!REQUEST_KNOWN.has(k)) dropped.push(k);
  return dropped;
}

const REQUEST_KNOWN = new Set([
  'model',
  'contents',
  'systemInstruction',
  'system_instruction',
  'tools',
  'toolConfig',
  'tool_config',
  'generationConfig',
  'generation_config',
  'safetySettings',
  'safety_settings',
  'labels',
  'serviceTier',
  'cachedContent',
]);

// ---------------------------------------------------------------------------------------------
// Thought signatures

/**
 * A Claude model's signed thinking travels to a Gemini client as the thoughtSignature of the
 * function call it led to (where Gemini puts its own), behind this prefix, and comes back to
 * Anthropic from there on the next turn, so that Claude's tool loop with thinking keeps working.
 * The blob carries Anthropic's own signature (itself opaque and verified by Anthropic), never a
 * key of ours. Gemini would refuse such a signature: the identity path replaces it.
 */
export const ANTHROPIC_SIGNATURE_PREFIX = 'anthropic:';

export function sealThinking(blocks: JsonObject[]): string {
  return ANTHROPIC_SIGNATURE_PREFIX + Buffer.from(JSON.stringify(blocks)).toString('base64url');
}

/** The thinking blocks of a signature we made; undefined for any other (Gemini's own). */
export function openThinking(signature: string | undefined): (Anthropic.ThinkingBlock | Anthropic.RedactedThinkingBlock)[] | undefined {
  if (!signature?.startsWith(ANTHROPIC_SIGNATURE_PREFIX)) return undefined;
  try {
    const blocks: unknown = JSON.parse(Buffer.from(signature.slice(ANTHROPIC_SIGNATURE_PREFIX.length), 'base64url').toString());
    if (!Array.isArray(blocks)) return undefined;
    return blocks.filter(
      (b): b is Anthropic.ThinkingBlock | Anthropic.RedactedThinkingBlock =>
        isObject(b) &&
        ((b.type === 'thinking' && typeof b.thinking === 'string' && typeof b.signature === 'string') ||
          (b.type === 'redacted_thinking' && typeof b.data === 'string')),
    );
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Replies

export type GeminiFinish = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'OTHER';

/** Gemini's `*TokensDetails` list: TEXT and the other modalities with tokens. */
function modalities(text: number, other: Record<string, number>): Gemini.ModalityTokenCount[] {
  const list: Gemini.ModalityTokenCount[] = [{ modality: 'TEXT', tokenCount: text }];
  for (const [modality, tokenCount] of Object.entries(other)) if (tokenCount > 0) list.push({ modality, tokenCount });
  return list;
}

/** usageMetadata of what was billed: promptTokenCount includes the cached part, candidates exclude the thoughts. */
export function usageMetadata(u: Settlement['usage']): Gemini.GeminiUsageMetadata {
  const prompt = u.promptTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const thoughts = Math.min(u.reasoningTokens, u.completionTokens);
  const out: Gemini.GeminiUsageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: u.completionTokens - thoughts,
    totalTokenCount: prompt + u.completionTokens,
  };
  if (u.cacheReadTokens > 0) out.cachedContentTokenCount = u.cacheReadTokens;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  // Modality details when an upstream reported audio or image tokens (the rest is text).
  const audioIn = Math.min(u.audioInputTokens ?? 0, u.promptTokens);
  if (audioIn > 0) out.promptTokensDetails = modalities(prompt - audioIn, { AUDIO: audioIn });
  const audioOut = u.audioOutputTokens ?? 0;
  const imageOut = u.imageOutputTokens ?? 0;
  if (audioOut + imageOut > 0)
    out.candidatesTokensDetails = modalities(Math.max(0, u.completionTokens - thoughts - audioOut - imageOut), { AUDIO: audioOut, IMAGE: imageOut });
  return out;
}

export const responseId = (call: CallInfo): string => call.requestId;

export function geminiResponse(call: CallInfo, parts: Part[], finish: GeminiFinish, settled: Settlement): string {
  return JSON.stringify({
    candidates: [{ content: { role: 'model', parts }, finishReason: finish, index: 0 }],
    usageMetadata: usageMetadata(settled.usage),
    modelVersion: call.model.name,
    responseId: responseId(call),
  });
}

/** How a stream's chunks are framed: SSE (alt=sse, what the SDKs ask for) or one JSON array. */
export type StreamFraming = 'sse' | 'array';

/** Frames GenerateContentResponse chunks; the first of an array stream opens it. */
export class ChunkFramer {
  private sent = false;

  constructor(readonly framing: StreamFraming) {}

  frame(json: string): string {
    if (this.framing === 'sse') return `data: ${json}\r\n\r\n`;
    const head = this.sent ? ',\r\n' : '[';
    this.sent = true;
    return head + json;
  }

  /** The end of the stream: closes an array (an empty one if nothing was sent). */
  close(): string {
    return this.framing === 'sse' ? '' : this.sent ? ']' : '[]';
  }
}

/** Writes a translated stream as Gemini's chunks: content as it comes, finishReason and usageMetadata in the last. */
export class GeminiChunkWriter {
  private readonly framer: ChunkFramer;
  private readonly tail: string;

  constructor(call: CallInfo, framing: StreamFraming) {
    this.framer = new ChunkFramer(framing);
    this.tail = `,"modelVersion":${JSON.stringify(call.model.name)},"responseId":${JSON.stringify(responseId(call))}}`;
  }

  parts(parts: Part[]): string {
    if (parts.length === 0) return '';
    return this.framer.frame(`{"candidates":[{"content":${JSON.stringify({ role: 'model', parts })},"index":0}]${this.tail}`);
  }

  text(text: string, thought = false): string {
    return text === '' ? '' : this.parts([thought ? { text, thought: true } : { text }]);
  }

  end(finish: GeminiFinish, settled: Settlement): string {
    const last = this.framer.frame(
      `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"${finish}","index":0}],"usageMetadata":${JSON.stringify(usageMetadata(settled.usage))}${this.tail}`,
    );
    return last + this.framer.close();
  }
}

/** A function call part of a reply; the signature (ours, or none) rides on it as on Gemini's. */
export function functionCallPart(id: string, name: string, args: unknown, signature?: string): Part {
  const part: Part = { functionCall: { id, name, args: isObject(args) ? args : {} } };
  if (signature) part.thoughtSignature = signature;
  return part;
}

/** Function arguments from their JSON text: what does not parse to an object becomes {} (Gemini's args are objects). */
export function parseArgs(text: string): JsonObject {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

/** An upstream's 4xx in Google's envelope, its status kept; `message` pulls the text out of the upstream's body. */
export function geminiError(status: number, text: string, message: (body: unknown) => string | undefined): TranslatedError {
  return { status, body: googleErrorBody(status, upstreamErrorText(status, text, message)) };
}

/** The message of an OpenAI- or Anthropic-style error body. */
export function nestedMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const e = body.error;
  if (isObject(e) && typeof e.message === 'string') return e.message;
  if (typeof e === 'string') return e;
  return typeof body.message === 'string' ? body.message : undefined;
}

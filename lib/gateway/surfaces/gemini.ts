// /v1/gemini: Google's Gemini API (generateContent, streamGenerateContent, countTokens, the model
// list) for @google/genai (httpOptions.baseUrl) and Gemini CLI (GOOGLE_GEMINI_BASE_URL). The model
// is in the path, the key in x-goog-api-key, ?key= or Authorization; errors in Google's envelope.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { GatewayError, googleStatus as googleStatusOf } from '@/lib/errors';
import { isModelName, type RequestContext } from '@/lib/gateway/context';
import { responseHeaders } from '@/lib/gateway/answer';
import type { ModelInfo } from '@/lib/config';
import { runPipeline, type PreparedRequest, type SurfaceSpec } from '@/lib/gateway/pipeline';
import { invalidField, type JsonObject } from '@/lib/gateway/body';
import { countTokens } from '@/lib/gateway/tokens';
import { authenticate } from '@/lib/auth/principal';
import { checkDenied } from '@/lib/gateway/admission';
import { checkKeyAccess, keyAllowsModel, keyClientIp } from '@/lib/keys/access';
import { geminiTranslators } from '@/lib/gateway/translate';
import { geminiCountTokens } from '@/lib/gateway/translate/gemini-gemini';
import type { GeminiClientOptions, StreamFraming } from '@/lib/gateway/translate/gemini-client';
import type { Translator, UpstreamProtocol } from '@/lib/gateway/translate/types';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { geminiOutputCap } from '@/lib/gateway/admission/clamp';
import { inRegionFilter } from '@/lib/gateway/models';

export const GEMINI_PREFIX = '/v1/gemini';
const MODELS_PATH = `${GEMINI_PREFIX}/v1beta/models`;

/** Every text the prompt holds (contents, system instruction, function declarations): what our tokenizer counts. */
function promptText(body: JsonObject): string {
  const texts: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string') texts.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (isObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        // Media bytes and opaque signatures are not text the model reads as tokens of text.
        if (k === 'inlineData' || k === 'inline_data' || k === 'thoughtSignature' || k === 'mimeType') continue;
        walk(x, depth + 1);
      }
    }
  };
  walk(body.systemInstruction, 0);
  walk(body.contents, 0);
  walk(body.tools, 0);
  return texts.join('\n');
}

async function estimatePrompt(body: JsonObject, limit = Infinity): Promise<number> {
  return countTokens(promptText(body), limit);
}

function requireContents(body: JsonObject): void {
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) throw invalidField('contents', 'contents: must be a non-empty array of Content objects.');
  contents.forEach((c, i) => {
    if (!isObject(c) || !Array.isArray(c.parts)) throw invalidField(`contents.${i}`, `contents.${i}: must be a Content object with a parts array.`);
  });
}

function maxOutputOf(body: JsonObject): number | undefined {
  const cfg = body.generationConfig;
  const max = isObject(cfg) ? cfg.maxOutputTokens : undefined;
  if (max === undefined || max === null) return undefined;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1)
    throw invalidField('generationConfig.maxOutputTokens', 'generationConfig.maxOutputTokens: must be a positive integer.');
  return max;
}

/** Candidates asked for (reserved and billed as that many replies; more than one only on a Gemini channel). */
function candidatesOf(body: JsonObject): number {
  const cfg = body.generationConfig;
  const n = isObject(cfg) ? cfg.candidateCount : undefined;
  if (n === undefined || n === null) return 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 8)
    throw invalidField('generationConfig.candidateCount', 'generationConfig.candidateCount: must be an integer from 1 to 8.');
  return n;
}

/**
 * Google's grounding tools, billed by Google per grounded prompt: the gateway has no price for them
 * and cannot count them from the reply, so a Gemini channel never gets them (the operator would pay);
 * the translations to other protocols drop them.
 */
const PAID_GOOGLE_TOOLS = ['googleSearch', 'googleSearchRetrieval', 'googleMaps', 'google_search', 'google_search_retrieval', 'google_maps'];

function paidToolRefusal(body: JsonObject): GatewayError | undefined {
  if (!Array.isArray(body.tools)) return undefined;
  for (let i = 0; i < body.tools.length; i++) {
    const tool = body.tools[i];
    const name = isObject(tool) ? PAID_GOOGLE_TOOLS.find((k) => tool[k] !== undefined) : undefined;
    if (name) return invalidField(`tools.${i}.${name}`, `tools.${i}.${name}: Google's grounding tools are not available through this gateway.`);
  }
  return undefined;
}

/** A generateContent request: one translator per upstream protocol, made for this request's options. */
class GenerateRequest implements PreparedRequest {
  readonly choices: number;
  readonly billed = true;
  private readonly paidTool: GatewayError | undefined;
  private readonly translators = new Map<UpstreamProtocol, Translator | undefined>();

  constructor(
    private readonly body: JsonObject,
    readonly model: string,
    readonly stream: boolean,
    readonly maxOutputTokens: number | undefined,
    private readonly opts: GeminiClientOptions,
  ) {
    this.choices = candidatesOf(body);
    this.paidTool = paidToolRefusal(body);
  }

  async autoNeeds(limit: number) {
    const cfg = this.body.generationConfig;
    return {
      tools: Array.isArray(this.body.tools) && this.body.tools.length > 0,
      json: isObject(cfg) && cfg.responseMimeType === 'application/json',
      promptTokens: await estimatePrompt(this.body, limit),
      maxOutputTokens: this.maxOutputTokens,
    };
  }

  estimatePrompt(): Promise<number> {
    return estimatePrompt(this.body);
  }

  translator(protocol: UpstreamProtocol): Translator | undefined {
    // Made once per protocol: the pipeline caches the upstream call per translator.
    if (!this.translators.has(protocol)) {
      let t = geminiTranslators[protocol]?.(this.opts);
      const refusal = this.paidTool;
      if (t && refusal && protocol === 'gemini') {
        t = {
          ...t,
          request: () => {
            throw refusal;
          },
        };
      }
      this.translators.set(protocol, t);
    }
    return this.translators.get(protocol);
  }

  get streamContentType(): string | undefined {
    return this.opts.framing === 'array' ? 'application/json; charset=utf-8' : undefined;
  }

  streamError(err: GatewayError): string {
    const body = JSON.stringify({ error: { code: err.status, message: err.message, status: googleStatusOf(err.status) } });
    return this.opts.framing === 'sse' ? `data: ${body}\r\n\r\n` : `,\r\n${body}]`;
  }
}

function includeThoughts(body: JsonObject): boolean {
  const cfg = body.generationConfig;
  const tc = isObject(cfg) ? cfg.thinkingConfig : undefined;
  return isObject(tc) && tc.includeThoughts === true;
}

function generateSurface(model: string, stream: boolean, framing: StreamFraming): SurfaceSpec {
  return {
    endpoint: 'chat',
    operation: 'chat',
    kind: 'chat',
    modelsPath: MODELS_PATH,
    modelNotFoundStatus: 404,
    maxReplyBytes: 32 * 1024 * 1024,
    outputCap: geminiOutputCap,
    validate(req) {
      const body = req.body.json;
      requireContents(body);
      return new GenerateRequest(body, model, stream, maxOutputOf(body), { framing, includeThoughts: includeThoughts(body) });
    },
  };
}

/**
 * countTokens: forwarded on a Gemini channel, counted here with the gateway's tokenizer for a model
 * no Gemini channel serves. Admitted under count_tokens' own limits, logged, not billed. The body is
 * {contents} or {generateContentRequest: {...}}.
 */
function countTokensSurface(model: string): SurfaceSpec {
  return {
    endpoint: 'count_tokens',
    operation: 'count_tokens',
    kind: 'chat',
    modelsPath: MODELS_PATH,
    modelNotFoundStatus: 404,
    maxReplyBytes: 1024 * 1024,
    validate(req) {
      const outer = req.body.json;
      const body = isObject(outer.generateContentRequest) ? outer.generateContentRequest : outer;
      requireContents(body);
      return {
        model,
        stream: false,
        choices: 1,
        billed: false,
        noFallback: true,
        estimatePrompt: () => estimatePrompt(body),
        translator: (protocol) => (protocol === 'gemini' ? geminiCountTokens : undefined),
        local: async () => JSON.stringify({ totalTokens: await estimatePrompt(body) }),
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The model list

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

function modelRecord(m: ModelInfo): JsonObject {
  return {
    name: `models/${m.name}`,
    baseModelId: m.name,
    version: '001',
    displayName: m.name,
    description: `${m.name} (${m.ownedBy}) through the gateway`,
    inputTokenLimit: m.contextWindow,
    outputTokenLimit: m.maxOutputTokens,
    supportedGenerationMethods: METHODS,
    thinking: true,
  };
}

/** The chat models the caller may use, in catalogue order; of one region with `?region=`, the x-service-region header or a pin (as /v1/models). */
async function callerModels(ctx: RequestContext, req: GatewayRequest): Promise<ModelInfo[]> {
  const principal = await authenticate(req);
  checkKeyAccess(principal.guard, keyClientIp(req));
  const p = await checkDenied(principal, keyClientIp(req));
  const region = inRegionFilter(ctx.cfg, req, p);
  return [...ctx.cfg.models.values()].filter(
    (m) => m.kind === 'chat' && m.tiers.has(p.tier) && (ctx.cfg.channelsByModel.get(m.name)?.length ?? 0) > 0 && keyAllowsModel(p.guard, m.name) && region(m),
  );
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

function queryOf(req: GatewayRequest): URLSearchParams {
  return new URLSearchParams(req.query ?? '');
}

/** GET …/models?pageSize=&pageToken=: Google's shape, paged (the token is the offset, opaque to clients). */
async function listModels(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const models = await callerModels(ctx, req);
  const q = queryOf(req);
  const sizeText = q.get('pageSize');
  let size = DEFAULT_PAGE;
  if (sizeText !== null && sizeText !== '') {
    size = Number(sizeText);
    if (!Number.isInteger(size) || size < 0) throw new GatewayError('invalid_request', 'pageSize: must be a non-negative integer.', { param: 'pageSize' });
    size = Math.min(size || DEFAULT_PAGE, MAX_PAGE);
  }
  const token = q.get('pageToken');
  let offset = 0;
  if (token) {
    offset = Number(Buffer.from(token, 'base64url').toString());
    if (!Number.isInteger(offset) || offset < 0) throw new GatewayError('invalid_request', 'pageToken: not a token of this list.', { param: 'pageToken' });
  }
  const page = models.slice(offset, offset + size).map(modelRecord);
  const out: JsonObject = { models: page };
  if (offset + size < models.length) out.nextPageToken = Buffer.from(String(offset + size)).toString('base64url');
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
  sink.end(JSON.stringify(out));
}

async function getModel(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink, name: string): Promise<void> {
  const model = (await callerModels(ctx, req)).find((m) => m.name === name);
  if (!model) throw new GatewayError('not_found', `models/${name} is not found. GET ${MODELS_PATH} lists the models you can use.`);
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
  sink.end(JSON.stringify(modelRecord(model)));
}

// ---------------------------------------------------------------------------------------------
// Routing

export interface GeminiRoute {
  /** The path as logged and counted in metrics: the model is a parameter. */
  pattern: string;
  run(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void>;
}

const ACTIONS = new Set(['generateContent', 'streamGenerateContent', 'countTokens']);

/**
 * The key as Google's clients send it: x-goog-api-key (the SDKs), ?key= (REST examples) or
 * Authorization: Bearer. The first two are carried over into Authorization, where authentication reads keys.
 */
function adoptGoogleKey(req: GatewayRequest): void {
  if (req.headers.authorization || req.headers['x-api-key']) return;
  const key = req.headers['x-goog-api-key'] || queryOf(req).get('key');
  if (key) req.headers.authorization = `Bearer ${key}`;
}

/**
 * The route of a path under /v1/gemini: /{v1beta|v1|v1alpha}/models[/{model}[:{action}]]. A model
 * name may hold slashes (the part up to the last colon); undefined for any other path.
 */
export function geminiRoute(method: string, path: string): GeminiRoute | undefined {
  const m = /^\/v1\/gemini\/(v1beta|v1|v1alpha)\/models(?:\/(.+))?$/.exec(path);
  if (!m) return undefined;
  const version = m[1];
  const base = `${GEMINI_PREFIX}/${version}/models`;
  const rest = m[2];
  if (rest === undefined) {
    if (method !== 'GET') return undefined;
    return { pattern: base, run: (ctx, req, sink) => (adoptGoogleKey(req), listModels(ctx, req, sink)) };
  }
  const colon = rest.lastIndexOf(':');
  const action = colon >= 0 ? rest.slice(colon + 1) : undefined;
  let model = colon >= 0 ? rest.slice(0, colon) : rest;
  try {
    model = decodeURIComponent(model);
  } catch {
    return undefined;
  }
  if (action === undefined) {
    if (method !== 'GET') return undefined;
    return { pattern: `${base}/{model}`, run: (ctx, req, sink) => (adoptGoogleKey(req), getModel(ctx, req, sink, model)) };
  }
  if (method !== 'POST' || !ACTIONS.has(action)) return undefined;
  return {
    pattern: `${base}/{model}:${action}`,
    run(ctx, req, sink) {
      adoptGoogleKey(req);
      if (model === '' || !isModelName(model)) {
        throw new GatewayError('model_not_found', `models/${model.slice(0, 64)} is not found. GET ${MODELS_PATH} lists the models you can use.`, {
          status: 404,
          param: 'model',
        });
      }
      if (action === 'countTokens') return runPipeline(ctx, req, sink, countTokensSurface(model));
      const stream = action === 'streamGenerateContent';
      const framing: StreamFraming = queryOf(req).get('alt') === 'sse' ? 'sse' : 'array';
      return runPipeline(ctx, req, sink, generateSurface(model, stream, framing));
    },
  };
}

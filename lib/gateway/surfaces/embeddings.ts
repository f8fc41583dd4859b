// POST /v1/embeddings: OpenAI's embeddings, on OpenAI-protocol channels.
import type { ModelInfo } from '@/lib/config';
import { usageCount } from '@/lib/billing/cost';
import type { SurfaceSpec } from '@/lib/gateway/pipeline';
import { invalidField, optionalInt, upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { countTextsTokens } from '@/lib/gateway/tokens';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';
import { openaiToOpenai } from '@/lib/gateway/translate/openai-openai';
import { serviceMember } from '@/lib/gateway/translate/openai-client';
import type { Translator } from '@/lib/gateway/translate/types';

export const MAX_EMBEDDING_INPUTS = 100;

function inputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') {
    if (input === '') throw invalidField('input', '"input" must not be empty.');
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) throw invalidField('input', '"input" must be a string or a non-empty array of strings.');
  if (input.length > MAX_EMBEDDING_INPUTS)
    throw invalidField('input', `"input" has ${input.length} strings; at most ${MAX_EMBEDDING_INPUTS} are allowed per request.`);
  input.forEach((s, i) => {
    if (typeof s !== 'string' || s === '') throw invalidField(`input[${i}]`, `input[${i}] must be a non-empty string.`);
  });
  return input as string[];
}

/**
 * The largest embeddings reply read: a valid one holds exactly `count` vectors of the model's
 * dimensions, and a JSON number of a float takes at most ~24 characters (48 allows for a
 * pretty-printing upstream), plus an envelope per vector and for the list; never above 64 MiB. A
 * reply beyond it cannot be valid, so it is refused (the channel's failure) without reading on.
 */
export function embeddingsReplyBound(count: number, model: ModelInfo): number {
  return Math.min(64 * 1024 * 1024, 64 * 1024 + count * (1024 + (model.dimensions ?? 0) * 48));
}

function toBase64(vector: number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** The dimensions asked for (OpenAI's shortened vectors), checked against the model's. */
function dimensionsFor(body: JsonObject, model: ModelInfo): number {
  const modelDimensions = model.dimensions ?? 0;
  const dimensions = optionalInt(body, 'dimensions', 1) ?? modelDimensions;
  if (dimensions > modelDimensions) throw invalidField('dimensions', `"dimensions" must be at most ${modelDimensions} for ${model.name}.`);
  return dimensions;
}

/** The embeddings translator of one request: it checks the reply against the inputs and dimensions asked for. */
function embeddingsTranslator(body: JsonObject, count: number, format: 'float' | 'base64'): Translator {
  return {
    request(req, call) {
      dimensionsFor(body, call.model);
      // Always floats upstream: the dimensions are checked here and base64 encoded here.
      return { body: upstreamBody(req.body, { encoding_format: 'float', service: undefined }) };
    },
    response(text, call) {
      let parsed: { data?: { index?: number; embedding?: number[] }[]; usage?: { prompt_tokens?: number } };
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        throw new UpstreamFailure('protocol', 'upstream sent malformed JSON');
      }
      const data = parsed?.data;
      const dimensions = dimensionsFor(body, call.model);
      if (!Array.isArray(data) || data.length !== count || data.some((d) => !Array.isArray(d?.embedding) || d.embedding.length !== dimensions)) {
        throw new UpstreamFailure('protocol', 'upstream embeddings malformed or of the wrong dimensions');
      }
      const prompt = usageCount(parsed.usage?.prompt_tokens);
      return {
        usage:
          prompt === undefined
            ? null
            : { promptTokens: prompt, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, completionFinal: true },
        completion: '',
        render(s) {
          const out = {
            object: 'list',
            data: data.map((d, i) => ({ object: 'embedding', index: d.index ?? i, embedding: format === 'base64' ? toBase64(d.embedding!) : d.embedding })),
            model: call.model.name,
            usage: { prompt_tokens: s.usage.promptTokens, total_tokens: s.usage.promptTokens },
            service: '__SERVICE__',
          };
          return JSON.stringify(out).replace('"__SERVICE__"', serviceMember(s));
        },
      };
    },
    stream: () => {
      throw new Error('embeddings do not stream');
    },
    error: openaiToOpenai.error,
  };
}

export const embeddingsSurface: SurfaceSpec = {
  endpoint: 'embeddings',
  operation: 'embeddings',
  kind: 'embedding',
  modelsPath: '/v1/models',
  maxReplyBytes: 64 * 1024 * 1024,
  validate(req) {
    const body = req.body.json;
    const texts = inputs(body);
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') throw invalidField('encoding_format', '"encoding_format" must be "float" or "base64".');
    const translator = embeddingsTranslator(body, texts.length, format);
    return {
      stream: false,
      choices: 1,
      billed: true,
      noFallback: true,
      maxReplyBytes: (model) => embeddingsReplyBound(texts.length, model),
      estimatePrompt: () => countTextsTokens(texts),
      translator: (protocol) => (protocol === 'openai' ? translator : undefined),
    };
  },
};

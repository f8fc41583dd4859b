import { GatewayError } from '@/lib/errors';
import { maxCostOf, noUsage, usageCount } from '@/lib/billing/cost';
import { formatPico } from '@/lib/billing/money';
import { invalidField, optionalInt, upstreamBody, type JsonObject } from '@/lib/gateway/body';
import { resolveModel, orderChannels } from '@/lib/gateway/router';
import { callUpstream, readUpstreamBody } from '@/lib/gateway/upstream';
import { countTokens, promptTokenBound } from '@/lib/gateway/tokens';
import type { RequestContext } from '@/lib/gateway/context';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';

export const MAX_EMBEDDING_INPUTS = 100;

function inputs(body: JsonObject): string[] {
  const input = body.input;
  if (typeof input === 'string') {
    if (input === '') throw invalidField('input', '"input" must not be empty.');
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) throw invalidField('input', '"input" must be a string or a non-empty array of strings.');
  if (input.length > MAX_EMBEDDING_INPUTS) throw invalidField('input', `"input" has ${input.length} strings; at most ${MAX_EMBEDDING_INPUTS} are allowed per request.`);
  input.forEach((s, i) => {
    if (typeof s !== 'string' || s === '') throw invalidField(`input[${i}]`, `input[${i}] must be a non-empty string.`);
  });
  return input as string[];
}

function toBase64(vector: number[]): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export async function embeddings(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const cfg = ctx.cfg;
  const request = await ctx.open(req);
  const { raw, json: body } = request;
  const principal = ctx.principal!;
  const texts = inputs(body);
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw invalidField('encoding_format', '"encoding_format" must be "float" or "base64".');
  const plan = resolveModel(cfg, body.model, principal.tier, 'embedding', 'openai', undefined, principal.guard?.models);
  const model = plan.models[0];
  ctx.model = model;
  // OpenAI's `dimensions` (shortened vectors) goes upstream unchanged; the reply is checked against it.
  const modelDimensions = model.dimensions ?? 0;
  const dimensions = optionalInt(body, 'dimensions', 1) ?? modelDimensions;
  if (dimensions > modelDimensions) throw invalidField('dimensions', `"dimensions" must be at most ${modelDimensions} for ${model.name}.`);
  await ctx.admit(model, 'embeddings', maxCostOf(model, promptTokenBound(raw.length), 0));
  // Always ask for floats: we check the dimensions and encode base64 ourselves.
  const payload = upstreamBody(request, { encoding_format: 'float' });
  for (const channel of orderChannels(cfg.channelsByModel.get(model.name) ?? [])) {
    const tried = await ctx.tryChannel(req, channel, model, (signal) => callUpstream(channel, '/embeddings', payload, { authorization: `Bearer ${channel.apiKey}` }, signal));
    if (!tried) continue;
    const { res, tracker } = tried;
    try {
      const text = await readUpstreamBody(res.body, 256 * 1024 * 1024);
      ctx.channel = channel.name;
      if (res.status >= 400) {
        tracker.finish(true, false);
        ctx.status = res.status;
        ctx.outcome = 'error';
        ctx.errorCode = 'upstream_rejected';
        sink.start(res.status, ctx.headers({ 'content-type': 'application/json', 'x-should-retry': 'false' }));
        sink.end(text);
        return;
      }
      const parsed = JSON.parse(text) as { data?: { index?: number; embedding?: number[] }[]; usage?: { prompt_tokens?: number } };
      const data = parsed.data;
      if (!Array.isArray(data) || data.length !== texts.length || data.some((d) => !Array.isArray(d.embedding) || d.embedding.length !== dimensions)) {
        throw new Error('upstream embeddings malformed or of the wrong dimensions');
      }
      const promptTokens = usageCount(parsed.usage?.prompt_tokens) ?? null;
      ctx.settleCost(promptTokens === null ? { ...noUsage(), promptTokens: (await Promise.all(texts.map(countTokens))).reduce((a, b) => a + b, 0), estimated: true } : { ...noUsage(), promptTokens });
      tracker.finish(true);
      ctx.markFirstToken();
      const out = {
        object: 'list',
        data: data.map((d, i) => ({ object: 'embedding', index: d.index ?? i, embedding: format === 'base64' ? toBase64(d.embedding!) : d.embedding })),
        model: model.name,
        usage: { prompt_tokens: ctx.usage.promptTokens, total_tokens: ctx.usage.promptTokens },
        service: { channel: channel.name, latency_ms: ctx.elapsedMs(), cost_usd: '__COST__' },
      };
      sink.start(200, ctx.headers({ 'content-type': 'application/json' }));
      sink.end(JSON.stringify(out).replace('"__COST__"', formatPico(ctx.cost)));
      return;
    } catch (err) {
      if (req.signal.aborted) throw ctx.clientGone();
      tracker.fail((err as Error).message);
      ctx.channel = null;
    }
  }
  throw new GatewayError('all_channels_failed', `All upstream channels failed for ${model.name}.`);
}

import { authenticate, type Principal } from '@/lib/auth/principal';
import { inRegion, REGION_HEADER, requestRegion } from '@/lib/region';
import { checkDenied } from '@/lib/gateway/admission';
import type { GatewayConfig, ModelInfo, TierName } from '@/lib/config';
import type { RequestContext } from '@/lib/gateway/context';
import { responseHeaders } from '@/lib/gateway/answer';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { checkKeyAccess, keyAllowsModel, keyClientIp } from '@/lib/keys/access';

function openaiRecord(m: ModelInfo, strict: boolean) {
  const base = { id: m.name, object: 'model', created: m.created, owned_by: m.ownedBy };
  if (strict) return base;
  return {
    ...base,
    context_window: m.contextWindow,
    tags: m.tags,
    input_price_usd_per_million: Number(m.inputUsdPerMillion),
    output_price_usd_per_million: Number(m.outputUsdPerMillion),
  };
}

/** A model some channel serves: a model without one could only ever fail. */
const servable = (cfg: GatewayConfig, m: ModelInfo) => (cfg.channelsByModel.get(m.name)?.length ?? 0) > 0;

/** Every model an account of `tier` may call, whatever protocol its channels speak: GET /v1/models' list (before a key's own model list) and the playground's. */
export function callableModels(cfg: GatewayConfig, tier: TierName): ModelInfo[] {
  return [...cfg.models.values()].filter((m) => m.tiers.has(tier) && servable(cfg, m));
}

/** `?region=` (or the x-service-region header, or the caller's pin): only models a channel of that region serves. */
export function inRegionFilter(cfg: GatewayConfig, req: GatewayRequest, principal: Principal): (m: ModelInfo) => boolean {
  const asked = new URLSearchParams(req.query ?? '').get('region') ?? req.headers[REGION_HEADER];
  const region = requestRegion(asked, undefined, principal.regionPin ?? {});
  return region === null ? () => true : (m) => inRegion(cfg.channelsByModel.get(m.name) ?? [], region).length > 0;
}

/** The caller of a model list: these requests admit nothing, so the deny markers are read here. */
async function caller(req: GatewayRequest) {
  const principal = await authenticate(req);
  checkKeyAccess(principal.guard, keyClientIp(req)); // the key's expiry and address ranges
  return checkDenied(principal, keyClientIp(req));
}

/** GET /v1/models: every model the caller's tier may use, whatever protocol its channels speak. */
export async function listModels(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(req);
  const strict = (req.headers.accept ?? '').toLowerCase().includes('application/openai+json');
  const region = inRegionFilter(ctx.cfg, req, principal);
  const data = callableModels(ctx.cfg, principal.tier)
    .filter((m) => keyAllowsModel(principal.guard, m.name) && region(m))
    .map((m) => openaiRecord(m, strict));
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
  sink.end(JSON.stringify({ object: 'list', data }));
}

/** GET /v1/anthropic/v1/models: every chat model the caller's tier may use, in Anthropic's shape. */
export async function listAnthropicModels(ctx: RequestContext, req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const principal = await caller(req);
  const region = inRegionFilter(ctx.cfg, req, principal);
  const data = callableModels(ctx.cfg, principal.tier)
    .filter((m) => m.kind === 'chat' && keyAllowsModel(principal.guard, m.name) && region(m))
    .map((m) => ({ type: 'model', id: m.name, display_name: m.name, created_at: new Date(m.created * 1000).toISOString() }));
  sink.start(200, responseHeaders(ctx, { 'content-type': 'application/json' }));
  sink.end(JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }));
}

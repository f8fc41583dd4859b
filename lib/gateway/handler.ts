import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { finish, newContext, type RequestContext } from '@/lib/gateway/context';
import { clientLeft, fail } from '@/lib/gateway/answer';
import { anthropicProtocol, embeddingsProtocol, geminiProtocol, openaiProtocol, type ClientProtocol } from '@/lib/gateway/surfaces/protocol';
import { listAnthropicModels, listModels } from '@/lib/gateway/models';
import { runPipeline, type SurfaceSpec } from '@/lib/gateway/pipeline';
import { openaiChatSurface } from '@/lib/gateway/surfaces/openai-chat';
import { anthropicCountTokensSurface, anthropicMessagesSurface } from '@/lib/gateway/surfaces/anthropic-messages';
import { embeddingsSurface } from '@/lib/gateway/surfaces/embeddings';
import { getResponse, listInputItems, removeResponse, responsesSurface } from '@/lib/gateway/surfaces/responses';
import { GEMINI_PREFIX, geminiRoute } from '@/lib/gateway/surfaces/gemini';
import { responsesCompactSurface } from '@/lib/gateway/surfaces/responses-compact';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { lifecycle } from '@/lib/shutdown';
import { jobParamRoutes, jobRoutes } from '@/lib/gateway/jobs/routes';
import { startRequestTrace } from '@/lib/telemetry/tracing';

const state = lifecycle();

type Route = (ctx: RequestContext, req: GatewayRequest, sink: ResponseSink) => Promise<void>;

const pipeline =
  (surface: SurfaceSpec): Route =>
  (ctx, req, sink) =>
    runPipeline(ctx, req, sink, surface);

/**
 * The client protocol of each mount: errors, stream error events and headers are answered as its
 * clients read them, whichever route (or none) the path names. The longest mount that a path is
 * under wins; anything else speaks OpenAI's protocol.
 */
const mounts: [prefix: string, protocol: ClientProtocol][] = [
  ['/v1/anthropic', anthropicProtocol],
  [GEMINI_PREFIX, geminiProtocol],
  ['/v1/embeddings', embeddingsProtocol],
];

function protocolOf(path: string): ClientProtocol {
  for (const [prefix, protocol] of mounts) if (path === prefix || path.startsWith(`${prefix}/`)) return protocol;
  return openaiProtocol;
}

const routes: Partial<Record<string, Route>> = {
  'POST /v1/chat/completions': pipeline(openaiChatSurface),
  'POST /v1/embeddings': pipeline(embeddingsSurface),
  'GET /v1/models': listModels,
  'POST /v1/anthropic/v1/messages': pipeline(anthropicMessagesSurface),
  'POST /v1/anthropic/v1/messages/count_tokens': pipeline(anthropicCountTokensSurface),
  'GET /v1/anthropic/v1/models': listAnthropicModels,
  'POST /v1/responses': pipeline(responsesSurface),
  'POST /v1/responses/compact': pipeline(responsesCompactSurface),
  ...jobRoutes, // videos, files and batches (lib/jobs/routes.ts)
};

/**
 * Other spellings of the mirror's paths: @ai-sdk/anthropic appends `/messages` to its base URL
 * (default https://api.anthropic.com/v1), so with `{base}/v1/anthropic` it calls these.
 */
const aliases: Partial<Record<string, string>> = {
  '/v1/anthropic/messages': '/v1/anthropic/v1/messages',
  '/v1/anthropic/messages/count_tokens': '/v1/anthropic/v1/messages/count_tokens',
  '/v1/anthropic/models': '/v1/anthropic/v1/models',
};

/** Routes with a path segment that is a parameter, keyed by their path with `{id}`. */
const paramRoutes: Partial<Record<string, Route>> = {
  'GET /v1/responses/{id}': getResponse,
  'DELETE /v1/responses/{id}': removeResponse,
  'GET /v1/responses/{id}/input_items': listInputItems,
  ...jobParamRoutes,
};

/** A path with one segment (after /v1/x) as `{id}`, when some parameter route has that shape; the last segment is tried first. */
function paramPath(path: string): string | undefined {
  const segments = path.split('/');
  for (let i = segments.length - 1; i >= 3; i--) {
    if (!segments[i]) continue;
    const pattern = [...segments.slice(0, i), '{id}', ...segments.slice(i + 1)].join('/');
    if (Object.keys(paramRoutes).some((r) => r.endsWith(` ${pattern}`))) return pattern;
  }
  return undefined;
}

/** Whether some route (of any method) has this exact path. */
const knownPath = (path: string) => Object.keys(routes).some((r) => r.endsWith(` ${path}`));

const notFound: Route = async (_ctx, req) => {
  const known = knownPath(req.path) || paramPath(req.path) !== undefined;
  throw new GatewayError('not_found', known ? `Method ${req.method} is not allowed on ${req.path}.` : `Unknown path ${req.path}.`, {
    status: known ? 405 : 404,
  });
};

const shuttingDown: Route = async () => {
  throw new GatewayError('unavailable', 'This gateway instance is shutting down. Please retry.', { retryAfterMs: 1000 });
};

/** The whole /v1 pipeline for one request, independent of the HTTP framework that carried it. */
export async function handleGateway(req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const given = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
  const path = aliases[given] ?? given;
  const protocol = protocolOf(path);
  const exact = routes[`${req.method} ${path}`];
  const gemini = protocol === geminiProtocol ? geminiRoute(req.method, path) : undefined;
  // A parameter route is logged (and counted in metrics) under its pattern, not each id.
  const pattern = exact ? undefined : (gemini?.pattern ?? paramPath(path));
  const route = state.draining
    ? shuttingDown
    : (exact ?? (gemini ? gemini.run : undefined) ?? (pattern ? paramRoutes[`${req.method} ${pattern}`] : undefined) ?? notFound);
  // Metrics label and log field: a route's path or pattern; any other path is 'other', since
  // anyone can send any path and each distinct label is a series /metrics keeps for good.
  const endpoint = pattern ?? (exact || knownPath(path) ? path : 'other');
  let ctx: RequestContext;
  try {
    ctx = newContext(protocol, endpoint, getConfig(), startRequestTrace(req.method, endpoint, path, req.headers));
  } catch (err) {
    sink.start(500, { 'content-type': 'application/json' });
    sink.end(JSON.stringify({ error: { message: 'Gateway misconfigured.', type: 'server_error', param: null, code: 'internal_error' } }));
    throw err;
  }
  try {
    await route(ctx, req, sink);
  } catch (err) {
    if (req.signal.aborted && !sink.started) clientLeft(ctx, sink);
    else await fail(ctx, sink, err);
  } finally {
    await finish(ctx);
    ctx.trace?.end(ctx.rec);
  }
}

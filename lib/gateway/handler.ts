import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { RequestContext, type Surface } from '@/lib/gateway/context';
import { chatCompletions } from '@/lib/gateway/openai-chat';
import { embeddings } from '@/lib/gateway/embeddings';
import { listAnthropicModels, listModels } from '@/lib/gateway/models';
import { anthropicCountTokens, anthropicMessages } from '@/lib/gateway/anthropic';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { lifecycle } from '@/lib/shutdown';

const state = lifecycle();

type Route = (ctx: RequestContext, req: GatewayRequest, sink: ResponseSink) => Promise<void>;

const routes: Record<string, Route> = {
  'POST /v1/chat/completions': chatCompletions,
  'POST /v1/embeddings': embeddings,
  'GET /v1/models': listModels,
  'POST /v1/anthropic/v1/messages': anthropicMessages,
  'POST /v1/anthropic/v1/messages/count_tokens': anthropicCountTokens,
  'GET /v1/anthropic/v1/models': listAnthropicModels,
};

const notFound: Route = async (_ctx, req) => {
  const known = Object.keys(routes).some((r) => r.endsWith(` ${req.path}`));
  throw new GatewayError('not_found', known ? `Method ${req.method} is not allowed on ${req.path}.` : `Unknown path ${req.path}.`, {
    status: known ? 405 : 404,
  });
};

const shuttingDown: Route = async () => {
  throw new GatewayError('unavailable', 'This gateway instance is shutting down. Please retry.', { retryAfterMs: 1000 });
};

/** The whole /v1 pipeline for one request, independent of the HTTP framework that carried it. */
export async function handleGateway(req: GatewayRequest, sink: ResponseSink): Promise<void> {
  const path = req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path;
  const surface: Surface = path.startsWith('/v1/anthropic') ? 'anthropic' : 'openai';
  const route = state.draining ? shuttingDown : (routes[`${req.method} ${path}`] ?? notFound);
  let ctx: RequestContext;
  try {
    ctx = new RequestContext(surface, path, getConfig());
  } catch (err) {
    sink.start(500, { 'content-type': 'application/json' });
    sink.end(JSON.stringify({ error: { message: 'Gateway misconfigured.', type: 'server_error', param: null, code: 'internal_error' } }));
    throw err;
  }
  try {
    await route(ctx, req, sink);
  } catch (err) {
    if (req.signal.aborted && !sink.started) {
      ctx.outcome = 'client_closed';
      ctx.status = 499;
      sink.end();
    } else {
      await ctx.fail(sink, err);
    }
  } finally {
    await ctx.finish();
  }
}

// npm start: one process, one port. /v1/* goes to the lean node:http gateway path; every other
// path (dashboard, /api/*) to Next.js. Both run the same lib/gateway pipeline and share state.
// GATEWAY_ONLY=1 (npm run start:gateway): only /v1 and the ops endpoints; Next.js is never loaded,
// which is most of the process's memory (docs/operations.md).
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';
import { env } from '@/lib/env';
import { clientIpFrom } from '@/lib/keys/client-ip';
import { getConfig } from '@/lib/config';
import { runMigrations } from '@/lib/db/migrate';
import { maintainPartitionsNow, startPartitionMaintenance } from '@/lib/db/partitions';
import { precompressedStatic } from '@/lib/http/static-assets';
import { handleNodeRequest, pendingGatewayRequests } from '@/lib/gateway/node-adapter';
import { lifecycle, onShutdownSignals } from '@/lib/shutdown';
import { healthz, metrics, readyz, type OpsResponse } from '@/lib/ops';
import { log, errorFields } from '@/lib/log';
import { syncCatalogue } from '@/lib/config/sync';
import { countTokens } from '@/lib/gateway/tokens';
import { getLimiter } from '@/lib/limits/runtime';
import { startCreditReconciler } from '@/lib/billing/ledger';
import { replayLogSpool } from '@/lib/billing/writer';
import { startChannelOverrideSync } from '@/lib/channels/overrides';
import { probeChannel } from '@/lib/gateway/probe';
import { startPlanSync } from '@/lib/plans/catalogue';
import { initTracing } from '@/lib/telemetry/tracing';
import { startJobs } from '@/lib/gateway/jobs/routes';
import { runningJobs, stopJobEngine } from '@/lib/gateway/jobs/engine';

function sendOps(res: http.ServerResponse, r: OpsResponse): void {
  res.writeHead(r.status, { 'content-type': r.contentType });
  res.end(r.body);
}

/** Event-loop delay since the previous scrape, in seconds (the histogram is reset on every read). */
function eventLoopGauges(h: ReturnType<typeof monitorEventLoopDelay>): Record<string, number> {
  const out = {
    nodejs_eventloop_delay_p99_seconds: h.count ? h.percentile(99) / 1e9 : 0,
    nodejs_eventloop_delay_max_seconds: h.count ? h.max / 1e9 : 0,
  };
  h.reset();
  return out;
}

/**
 * WASM_BASELINE=auto: the baseline tier with GATEWAY_ONLY=1 (the lean process) and on the embedded
 * default (no DATABASE_URL), where PGlite's PostgreSQL is the largest WebAssembly module and the
 * optimising tier's code for it and Prisma's query compiler kept ~70 MB (docs/decisions/061).
 */
function wasmBaseline(): boolean {
  return env.WASM_BASELINE === '1' || (env.WASM_BASELINE === 'auto' && (env.GATEWAY_ONLY || !env.DATABASE_URL));
}

async function main(): Promise<void> {
  lifecycle().customServer = true; // before Next starts: its instrumentation must leave signals to us
  // Before anything compiles WebAssembly (the Prisma client's query compiler, PGlite): see WASM_BASELINE.
  if (wasmBaseline()) v8.setFlagsFromString('--liftoff-only');
  getConfig(); // a broken operator config stops start-up here, naming the field
  await initTracing(); // OpenTelemetry, only when an OTLP endpoint is set (lib/telemetry/tracing.ts)
  const applied = await runMigrations();
  if (applied.length) log('info', 'migrations applied', { applied });
  // Today's request-log partition and the next days' before serving; rows of a day without one
  // would go to the default partition (kept, moved out later), never lost.
  await maintainPartitionsNow().catch((err) => log('warn', 'request-log partition maintenance failed; retrying', errorFields(err)));
  startPartitionMaintenance();
  // Rows a shutdown could not write (the database was down) and spooled: logged and charged now, once.
  await replayLogSpool().catch((err) => log('error', 'request log spool replay failed; the files stay for the next start', errorFields(err)));
  await syncCatalogue().catch((err) => log('warn', 'catalogue sync failed', errorFields(err)));
  // Connect the limiter to Redis now: created lazily, the first requests would find it still
  // connecting and run on the in-process fallback (per-instance limits, balances reloaded after).
  getLimiter();
  startCreditReconciler(); // credits recorded but not yet in the live balance (lib/billing/ledger.ts)
  startJobs(); // video generations and batches, on every instance (lib/gateway/jobs)
  let nextHandler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  if (env.GATEWAY_ONLY) {
    // Next's instrumentation would start this; without Next the server does.
    startChannelOverrideSync(probeChannel);
    startPlanSync();
    nextHandler = async (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: 'this server serves only /v1 (GATEWAY_ONLY=1); the dashboard runs elsewhere',
            type: 'not_found_error',
            param: null,
            code: 'not_found',
          },
        }),
      );
    };
  } else {
    const { default: next } = await import('next');
    const app = next({ dev: false, dir: process.cwd() });
    await app.prepare();
    const serveNext = app.getRequestHandler();
    const serveStatic = precompressedStatic();
    nextHandler = (req, res) => (serveStatic(req, res) ? Promise.resolve() : serveNext(req, res));
  }
  let inFlight = 0;
  // How long the request loop was held (anything synchronous: JSON, the embedded database when
  // inline): p99 and max since the previous /metrics scrape.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();

  const server = http.createServer({ maxHeaderSize: 32 * 1024, connectionsCheckingInterval: Math.min(1000, env.REQUEST_TIMEOUT_MS / 4) }, (req, res) => {
    const url = req.url ?? '/';
    inFlight++;
    res.on('close', () => inFlight--);
    if (url.startsWith('/v1/') || url === '/v1') return handleNodeRequest(req, res);
    if (url === '/healthz') return sendOps(res, healthz());
    if (url === '/readyz') return void readyz().then((r) => sendOps(res, r));
    if (url === '/metrics' || url.startsWith('/metrics?')) {
      // Connection counts are only gathered when scraped.
      return void server.getConnections(
        (_err, connections) =>
          void metrics(req.headers.authorization, {
            gc: /[?&]gc=1(&|$)/.test(url),
            extra: {
              gateway_requests_in_flight: pendingGatewayRequests(),
              http_responses_open: inFlight - 1,
              http_server_connections: connections ?? 0,
              ...eventLoopGauges(loopDelay),
            },
          }).then(
            (r) => sendOps(res, r),
            () => sendOps(res, { status: 500, contentType: 'text/plain', body: 'metrics unavailable\n' }),
          ),
      );
    }
    // Route handlers see only headers: they get the one address resolved from the socket and the
    // trusted proxies (TRUST_PROXY), never entries a client wrote.
    req.headers['x-forwarded-for'] = clientIpFrom(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    void nextHandler(req, res);
  });
  server.keepAliveTimeout = 65_000;
  // Receiving a request (headers and body) is bounded: a client trickling its body holds a socket
  // and a descriptor for as long as it likes otherwise. Node checks these every
  // connectionsCheckingInterval (set above). The response (a long stream) is not bounded by them.
  server.requestTimeout = env.REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(66_000, env.REQUEST_TIMEOUT_MS);

  onShutdownSignals({
    inFlight: () => inFlight,
    stopAccepting: () => {
      server.close();
      server.closeIdleConnections();
      void stopJobEngine(); // running jobs stop at their next step and go back to the queue
    },
    // Responses still open, and pipelines that have answered but not yet settled and queued their log row.
    busy: () => inFlight > 0 || pendingGatewayRequests() > 0 || runningJobs() > 0,
    // Streams still open are cut: they read their upstream only briefly more (abortDrainMs), then
    // settle, release and queue their log row as client_closed; the flush writes them.
    cut: () => server.closeAllConnections(),
    settling: () => pendingGatewayRequests() > 0,
  });

  server.listen({ port: env.PORT, host: env.HOST, backlog: env.LISTEN_BACKLOG }, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : env.PORT;
    // Load the tokenizer now, so the first reply without upstream usage does not wait for it
    // (TOKENIZER_PRELOAD: not by default in the lean GATEWAY_ONLY process, where it is most of the heap).
    if (env.TOKENIZER_PRELOAD === '1' || (env.TOKENIZER_PRELOAD === 'auto' && !env.GATEWAY_ONLY)) void countTokens('warm up');
    log('info', 'listening', {
      url: `http://127.0.0.1:${port}`,
      database: env.DATABASE_URL ? 'postgresql' : 'embedded',
      limiter: env.REDIS_CLUSTER_NODES.length > 0 ? 'redis-cluster' : env.REDIS_URL ? 'redis' : 'in-process',
      ...(env.GATEWAY_ONLY ? { gatewayOnly: true } : {}),
    });
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

// npm run bench:telemetry — CPU per request of the telemetry on the request path, in-process
// (steadier than the HTTP benchmark's rows on a busy machine): the metrics one served request
// records (prom-client), and the spans of one request (request, admission, one attempt with its
// traceparent, log write) with tracing off and on (every request sampled, OTLP http/protobuf to a
// local sink, export included). docs/decisions/027-opentelemetry-traces.md, 028-prom-client-and-pino.md.
import { spawn } from 'node:child_process';
import { inc, observe } from '@/lib/metrics';
import { observeGenAi } from '@/lib/telemetry/genai-metrics';
import { flushTracing, startRequestTrace } from '@/lib/telemetry/tracing';
import { servedRequest, startInProcessTracing } from '../tests/support/in-process-tracing';

const ROUNDS = 7;

async function cpuPerCall(name: string, n: number, f: (i: number) => void): Promise<void> {
  for (let i = 0; i < Math.min(n, 20_000); i++) f(i); // warm-up
  await flushTracing().catch(() => undefined);
  const runs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      f(i);
      // The batch span processor exports on timers: give it turns, as a server's event loop would.
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
    // What is still batched is exported inside the measured time (a flush racing a running export may give up: fine here).
    await flushTracing().catch(() => undefined);
    const d = process.cpuUsage(c);
    runs.push((d.user + d.system) / n);
  }
  runs.sort((a, b) => a - b);
  console.log(`${name.padEnd(72)} ${runs[ROUNDS >> 1].toFixed(2).padStart(7)} µs CPU/request (min ${runs[0].toFixed(2)})`);
}

const served = servedRequest({
  requestId: 'req_bench',
  stream: true,
  charge: { usage: { promptTokens: 20, completionTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 } },
  firstTokenMs: 12,
});
const channel = { name: 'openai-1', protocol: 'openai' };
const upstreamHeaders = { 'content-type': 'application/json', authorization: 'Bearer upstream' };

function metricsOfOneRequest(i: number): void {
  inc('gateway_key_lookups_total', { result: 'found' });
  inc('gateway_speculative_admissions_total', {});
  inc('gateway_upstream_attempts_total', { channel: `openai-${i & 1}` });
  inc('gateway_requests_total', { endpoint: '/v1/chat/completions', status: '200' });
  observe('gateway_request_duration_ms', { endpoint: '/v1/chat/completions' }, i % 300);
  inc('gateway_cost_usd_pico_total', { endpoint: '/v1/chat/completions' }, 123456);
}

function spansOfOneRequest(i: number): void {
  const trace = startRequestTrace(
    'POST',
    '/v1/chat/completions',
    '/v1/chat/completions',
    i & 1 ? { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } : {},
  );
  if (!trace) return;
  trace.admission(true, 1000n)();
  const attempt = trace.attempt(channel, 'gpt-4o-mini', 'chat', 1);
  attempt.inject(upstreamHeaders);
  attempt.end({ ok: true, status: 200 });
  trace.logWrite()();
  trace.end(served);
}

// The OTLP sink runs in a child process: its CPU is not the gateway's.
const SINK = `require('http').createServer((q, s) => { q.resume(); q.on('end', () => { s.writeHead(200, { 'content-type': 'application/x-protobuf' }); s.end(); }); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
const sinkPort = await new Promise<number>((resolve) => sink.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));

await cpuPerCall('metrics: the 6 counter/histogram updates of a served request', 200_000, metricsOfOneRequest);
await cpuPerCall('metrics: the GenAI histograms of a stream (token usage x2, TTFT, TPOT)', 200_000, () => observeGenAi(served, served.elapsedMs()));
await cpuPerCall('tracing off (no OTLP endpoint): the hooks of a request', 200_000, spansOfOneRequest);
const stopTracing = await startInProcessTracing({
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
  OTEL_TRACES_SAMPLER: 'always_on',
  OTEL_BSP_MAX_QUEUE_SIZE: '65536',
});
await cpuPerCall('tracing on, every request sampled: 4 spans, traceparent, OTLP export', 20_000, spansOfOneRequest);
await stopTracing();
sink.kill();

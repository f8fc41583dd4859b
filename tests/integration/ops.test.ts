import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount } from '../support/accounts';

let gw: RunningGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url, 'http://127.0.0.1:9'] }), env: { METRICS_TOKEN: 'metrics-token-123' } });
});
afterAll(async () => {
  await gw?.stop();
  await fake?.close();
});

describe('operations endpoints', () => {
  it('answers liveness and readiness', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', database: 'ok', limiter: 'redis' });
  });

  it('protects /metrics with the operator token', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-xyz' } })).status).toBe(401);
  });

  it('exports requests, latency histograms, upstream attempts and failures per channel, rejections and cost', async () => {
    const account = await createAccount({ balanceUsd: '1', limits: { rpm: 2 } });
    fake.queue({ type: 'status', status: 500 });
    const call = () =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
    // A per-account override below the tier's rpm applies: the third call within the minute is refused.
    // openai-1 fails with 500, openai-2 refuses the connection, then the declared fallback model serves.
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-service-model-id')).toBe('deepseek-chat');
    expect(first.headers.get('x-service-provider')).toBe('openai-1');
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(429);
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-123' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/gateway_requests_total\{endpoint="\/v1\/chat\/completions",status="200"\} 2/);
    expect(text).toMatch(/gateway_requests_total\{endpoint="\/v1\/chat\/completions",status="429"\} 1/);
    // prom-client writes a bucket's `le` first; the order of labels means nothing to Prometheus.
    expect(text).toMatch(/gateway_request_duration_ms_bucket\{le="\+Inf",endpoint="\/v1\/chat\/completions"\} 3/);
    expect(text).toMatch(/gateway_upstream_attempts_total\{channel="openai-1"\} 3/);
    expect(text).toMatch(/gateway_upstream_failures_total\{channel="openai-1"\} 1/);
    expect(text).toMatch(/gateway_upstream_attempts_total\{channel="openai-2"\} 1/);
    expect(text).toMatch(/gateway_upstream_failures_total\{channel="openai-2"\} 1/);
    expect(text).toMatch(/gateway_limiter_rejections_total\{limit="window",scope="u"\} 1/);
    expect(text).toMatch(/gateway_cost_usd_pico_total\{endpoint="\/v1\/chat\/completions"\} \d+/);
    expect(text).toMatch(/gateway_limiter_backend_redis 1/);
  });

  it('exports process gauges, computed when scraped: memory, active handles by type, upstream sockets, requests in flight', async () => {
    const res = await fetch(`${gw.url}/metrics?gc=1`, { headers: { authorization: 'Bearer metrics-token-123' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(20 * 2 ** 20);
    expect(value('nodejs_heap_used_bytes')).toBeGreaterThan(0);
    expect(value('nodejs_heap_used_bytes')).toBeLessThan(value('nodejs_heap_total_bytes') + 1);
    expect(text).toContain('# TYPE nodejs_active_resources gauge');
    expect(value('nodejs_active_resources{type="TCPServerWrap"}')).toBe(1); // the listener
    const byType = [...text.matchAll(/^nodejs_active_resources\{type="[^"]+"\} (\d+)$/gm)].reduce((s, m) => s + Number(m[1]), 0);
    expect(value('nodejs_active_handles')).toBe(byType);
    // The earlier test's calls went through both channels; the connection refused on openai-2 left no socket.
    expect(value('gateway_upstream_sockets{channel="openai-1"}')).toBeGreaterThanOrEqual(0);
    expect(value('gateway_upstream_sockets{channel="openai-2"}')).toBe(0);
    expect(value('gateway_requests_in_flight')).toBe(0);
    expect(value('http_responses_open')).toBe(0);
    expect(value('http_server_connections')).toBeGreaterThanOrEqual(1);
    // ?gc=1 is ignored unless METRICS_ALLOW_GC=1 (and node --expose-gc).
    expect(value('nodejs_gc_before_scrape')).toBe(0);
  });
});

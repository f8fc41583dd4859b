// OpenTelemetry traces (lib/telemetry/tracing.ts): the built gateway exports to a local OTLP
// receiver, in JSON (http/json) and in protobuf (http/protobuf); the spans of a fallback, a stream
// and a refusal, the client's traceparent continued and carried upstream, no prompt text by default.
// And the GenAI metrics on /metrics. The standard OTEL_* variables as the specification defines
// them: a traces endpoint taken as is, exporter headers, resource attributes, a sampler, the
// propagators (baggage by default, a propagator not installed left out), grpc answered over http/protobuf.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';

let fake: FakeUpstream;
let receiver: OtlpReceiver;
let json: RunningGateway;
let proto: RunningGateway;
let standard: RunningGateway;
let account: TestAccount;

const otelEnv = (protocol: string, service: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: service,
  OTEL_BSP_SCHEDULE_DELAY: '50',
  METRICS_TOKEN: 'metrics-token-123',
});

beforeAll(async () => {
  fake = await startFakeUpstream();
  receiver = await startOtlpReceiver(['/v1/traces', '/collector/traces']);
  // Two channels of the same upstream: a 500 queued on the first is a fallback to the second.
  const config = (prefix: string) => testConfig({ openaiUrls: [fake.url, fake.url], channelPrefix: prefix });
  [json, proto, standard, account] = await Promise.all([
    startGateway({ config: config('otj'), env: otelEnv('http/json', 'gw-json') }),
    startGateway({ config: config('otp'), env: otelEnv('http/protobuf', 'gw-proto') }),
    startGateway({
      config: config('ots'),
      env: {
        // Taken as is (no /v1/traces appended), over the base endpoint.
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/collector/traces`,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=tok%20123,x-team=gateway',
        OTEL_SERVICE_NAME: 'gw-standard',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,service.namespace=llm',
        OTEL_TRACES_SAMPLER: 'parentbased_always_off',
        OTEL_PROPAGATORS: 'tracecontext,b3',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    }),
    createAccount({ balanceUsd: '5' }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([json?.stop(), proto?.stop(), standard?.stop()]);
  await fake?.close();
  await receiver?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

function chat(gw: RunningGateway, apiKey: string, body: Record<string, unknown>, traceparent?: string, extra: Record<string, string> = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}), ...extra },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'the secret prompt text' }], ...body }),
  });
}

/** The spans of one trace, once its request span (and `count` spans in all) arrived. */
async function traceOf(traceId: string, count: number): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    if (spans.length >= count && spans.some((s) => s.kind === 2)) return spans;
    if (Date.now() > deadline) throw new Error(`trace ${traceId}: ${spans.length} spans of ${count}: ${spans.map((s) => s.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const requestSpan = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === 2)!;
const attemptSpans = (spans: ReceivedSpan[]) =>
  spans.filter((s) => s.kind === 3).sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

describe.each([
  ['http/json', () => json, 'json', 'otj'],
  ['http/protobuf', () => proto, 'protobuf', 'otp'],
] as const)('traces over OTLP %s', (_protocol, gateway, encoding, prefix) => {
  it('a fallback: the request span (GenAI attributes) under the client traceparent, admission, two attempts (the first failed, 500) each carried upstream, the log write', async () => {
    const traceId = hex(16);
    const clientSpan = hex(8);
    fake.reset();
    fake.queue({ type: 'status', status: 500 });
    const res = await chat(gateway(), account.apiKey, {}, `00-${traceId}-${clientSpan}-01`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-provider')).toBe(`${prefix}openai-2`);
    const spans = await traceOf(traceId, 5);
    expect(spans.every((s) => s.encoding === encoding)).toBe(true);
    const root = requestSpan(spans);
    expect(root.serviceName).toBe(encoding === 'json' ? 'gw-json' : 'gw-proto');
    expect(root.parentSpanId).toBe(clientSpan);
    expect(root.name).toBe('chat gpt-4o-mini');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.provider.name': 'openai',
      'http.response.status_code': 200,
      'gateway.channel': `${prefix}openai-2`,
      'gateway.attempts': 2,
    });
    expect(root.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(root.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // No prompt or completion text unless the operator opts in.
    expect(JSON.stringify(spans)).not.toContain('secret prompt');
    expect(Object.keys(root.attributes).filter((k) => k.startsWith('gen_ai.input') || k.startsWith('gen_ai.output'))).toEqual([]);

    const [admission] = named(spans, 'gateway.admission');
    expect(admission.parentSpanId).toBe(root.spanId);
    expect(admission.statusCode).toBe(0);
    const [failed, served] = attemptSpans(spans);
    expect([failed.parentSpanId, served.parentSpanId]).toEqual([root.spanId, root.spanId]);
    expect(failed.attributes).toMatchObject({ 'gateway.channel': `${prefix}openai-1`, 'http.response.status_code': 500, 'gateway.attempt.ok': false });
    expect(failed.attributes['gateway.fallback_reason']).toMatch(/500/);
    expect(failed.statusCode).toBe(2);
    expect(served.attributes).toMatchObject({ 'gateway.channel': `${prefix}openai-2`, 'http.response.status_code': 200, 'gateway.attempt.ok': true });
    expect(served.statusCode).toBe(0);
    expect(named(spans, 'gateway.log_write')[0].parentSpanId).toBe(root.spanId);

    // Each upstream call carried its own attempt span as the parent.
    const upstream = fake.requests.map((r) => String(r.headers.traceparent));
    expect(upstream).toEqual([`00-${traceId}-${failed.spanId}-01`, `00-${traceId}-${served.spanId}-01`]);
  });

  it('a stream: output tokens and the time to the first token on the request span, one attempt that lasts the stream', async () => {
    const traceId = hex(16);
    fake.reset();
    const res = await chat(gateway(), account.apiKey, { stream: true, stream_options: { include_usage: true } }, `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('[DONE]');
    const spans = await traceOf(traceId, 4);
    const root = requestSpan(spans);
    expect(root.attributes).toMatchObject({ 'gen_ai.request.stream': true, 'gen_ai.response.model': 'gpt-4o-mini', 'http.response.status_code': 200 });
    expect(root.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(root.attributes['gateway.first_token_ms']).toBeGreaterThanOrEqual(0);
    const attempts = attemptSpans(spans);
    expect(attempts).toHaveLength(1);
    expect(attempts[0].attributes['gateway.attempt.ok']).toBe(true);
  });

  it('a refusal (402, no balance): the admission span says why, no attempt, the request span carries the status and error.type', async () => {
    const broke = await createAccount();
    const traceId = hex(16);
    const res = await chat(gateway(), broke.apiKey, {}, `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(402);
    const spans = await traceOf(traceId, 2);
    const root = requestSpan(spans);
    expect(root.attributes).toMatchObject({ 'http.response.status_code': 402, 'error.type': 'insufficient_balance', 'gen_ai.request.model': 'gpt-4o-mini' });
    expect(root.attributes['gen_ai.response.model']).toBeUndefined();
    const [admission] = named(spans, 'gateway.admission');
    expect(admission.attributes['error.type']).toBe('insufficient_balance');
    expect(admission.statusCode).toBe(2);
    expect(attemptSpans(spans)).toEqual([]);
  });
});

it('without a client traceparent a request starts its own trace, and the upstream still gets one', async () => {
  fake.reset();
  const res = await chat(json, account.apiKey, {});
  expect(res.status).toBe(200);
  const sent = String(fake.requests[0].headers.traceparent);
  const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent)!;
  const spans = await traceOf(traceId, 4);
  expect(requestSpan(spans).parentSpanId).toBe('');
  expect(attemptSpans(spans)[0].spanId).toBe(spanId);
});

describe('the standard OTEL_* variables', () => {
  it('grpc asked: a start-up warning, then http/protobuf to the traces endpoint as given, with the exporter headers and the resource attributes', async () => {
    expect(standard.output()).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported[^\n]*http\/protobuf/);
    expect(standard.output()).toMatch(/OTEL_PROPAGATORS: b3 not supported/);
    fake.reset();
    const traceId = hex(16);
    const res = await chat(standard, account.apiKey, {}, `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(200);
    const spans = await traceOf(traceId, 4);
    const root = requestSpan(spans);
    expect(root.encoding).toBe('protobuf');
    expect(root.serviceName).toBe('gw-standard');
    expect(root.resource).toMatchObject({ 'deployment.environment.name': 'ci', 'service.namespace': 'llm' });
    const sent = receiver.exports.filter((e) => e.headers['x-team'] === 'gateway');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((e) => e.path === '/collector/traces' && e.headers['x-collector-token'] === 'tok 123')).toBe(true);
    expect(sent.every((e) => String(e.headers['content-type']).includes('protobuf'))).toBe(true);
  });

  it('OTEL_TRACES_SAMPLER=parentbased_always_off: a request without a sampled parent is not exported yet carries its trace upstream (flag 00); a sampled parent is followed', async () => {
    fake.reset();
    const res = await chat(standard, account.apiKey, {});
    expect(res.status).toBe(200);
    const unsampled = String(fake.requests[0].headers.traceparent);
    expect(unsampled).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const notSampledParent = hex(16);
    expect((await chat(standard, account.apiKey, {}, `00-${notSampledParent}-${hex(8)}-00`)).status).toBe(200);
    expect(String(fake.requests[1].headers.traceparent)).toMatch(new RegExp(`^00-${notSampledParent}-[0-9a-f]{16}-00$`));
    // A sampled request after them: once its spans are in, the earlier ones would have been too.
    const sampled = hex(16);
    expect((await chat(standard, account.apiKey, {}, `00-${sampled}-${hex(8)}-01`)).status).toBe(200);
    await traceOf(sampled, 4);
    const unsampledId = unsampled.split('-')[1];
    expect(receiver.spans.filter((s) => s.traceId === unsampledId || s.traceId === notSampledParent)).toEqual([]);
  });

  it('OTEL_PROPAGATORS: by default (tracecontext,baggage) the client baggage goes upstream beside traceparent; with tracecontext alone it does not', async () => {
    fake.reset();
    const baggage = { baggage: 'tenant=acme,plan=pro' };
    expect((await chat(json, account.apiKey, {}, `00-${hex(16)}-${hex(8)}-01`, baggage)).status).toBe(200);
    expect((await chat(standard, account.apiKey, {}, `00-${hex(16)}-${hex(8)}-01`, baggage)).status).toBe(200);
    const [byDefault, tracecontextOnly] = fake.requests.map((r) => r.headers);
    expect(String(byDefault.baggage).split(',').sort()).toEqual(['plan=pro', 'tenant=acme']);
    expect(byDefault.traceparent).toBeDefined();
    expect(tracecontextOnly.baggage).toBeUndefined();
    expect(tracecontextOnly.traceparent).toBeDefined();
  });
});

it('GenAI metrics per model and channel: token usage by type, time to first token and per output token of streams', async () => {
  fake.reset();
  const res = await chat(json, account.apiKey, { stream: true, stream_options: { include_usage: true } });
  await res.text();
  // The metrics are recorded when the request ends, just after its last byte.
  await new Promise((r) => setTimeout(r, 200));
  const text = await (await fetch(`${json.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-123' } })).text();
  const labels = 'gen_ai_response_model="gpt-4o-mini",channel="otjopenai-\\d"';
  expect(text).toContain('# TYPE gen_ai_client_token_usage histogram');
  expect(text).toMatch(new RegExp(`^gen_ai_client_token_usage_count\\{gen_ai_token_type="input",${labels}\\} [1-9]`, 'm'));
  expect(text).toMatch(new RegExp(`^gen_ai_client_token_usage_sum\\{gen_ai_token_type="output",${labels}\\} [1-9]`, 'm'));
  expect(text).toMatch(new RegExp(`^gen_ai_server_time_to_first_token_seconds_count\\{${labels}\\} [1-9]`, 'm'));
  expect(text).toMatch(new RegExp(`^gen_ai_server_time_per_output_token_seconds_count\\{${labels}\\} [1-9]`, 'm'));
});

it('the route-handler path (next start) traces too: instrumentation starts the SDK, the same spans', { timeout: 120_000 }, async () => {
  const next = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], channelPrefix: 'otn' }),
    mode: 'next',
    env: otelEnv('http/protobuf', 'gw-next'),
  });
  try {
    fake.reset();
    const traceId = hex(16);
    const res = await chat(next, account.apiKey, {}, `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(200);
    const spans = await traceOf(traceId, 4);
    expect(requestSpan(spans)).toMatchObject({ serviceName: 'gw-next', name: 'chat gpt-4o-mini' });
    expect(requestSpan(spans).attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(String(fake.requests[0].headers.traceparent)).toBe(`00-${traceId}-${attemptSpans(spans)[0].spanId}-01`);
    expect(named(spans, 'gateway.admission')).toHaveLength(1);
  } finally {
    await next.stop();
  }
});

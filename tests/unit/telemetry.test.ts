// The logger (pino), the metrics registry (prom-client) and tracing's off switch, in-process.
import { afterEach, describe, expect, it, vi } from 'vitest';

// Before lib/env.ts reads it (the suite runs with LOG_LEVEL=warn): info lines are what is tested.
vi.hoisted(() => {
  process.env.LOG_LEVEL = 'info';
});
import { log } from '@/lib/log';
import { inc, observe, renderMetrics } from '@/lib/metrics';
import { observeGenAi } from '@/lib/telemetry/genai-metrics';
import { initTracing, otlpProtocol, propagatorsOf, startRequestTrace, tracingConfigured } from '@/lib/telemetry/tracing';

afterEach(() => vi.restoreAllMocks());

describe('logs', () => {
  it('one JSON object a line with time, level and msg; info on stdout, warn on stderr; keys masked', () => {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
    log('info', 'listening', { port: 3000, key: 'sk-gw-abcdefghijklmnopqrstuvwxyz' });
    log('warn', 'slow', { ms: 12 });
    log('debug', 'below the level');
    expect(out).toHaveLength(1);
    expect(err).toHaveLength(1);
    const info = JSON.parse(out[0]);
    expect(info).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: 'info',
      msg: 'listening',
      port: 3000,
      key: 'sk-gw-…[redacted]',
    });
    expect(out[0].endsWith('\n')).toBe(true);
    expect(JSON.parse(err[0])).toMatchObject({ level: 'warn', msg: 'slow', ms: 12 });
  });
});

describe('metrics', () => {
  it('counters and histograms under their names and labels, gauges set at scrape time', async () => {
    inc('unit_requests_total', { endpoint: '/v1/x', status: '200' });
    inc('unit_requests_total', { endpoint: '/v1/x', status: '200' }, 2);
    observe('unit_duration_ms', { endpoint: '/v1/x' }, 7);
    const text = await renderMetrics({ unit_gauge: 5, unit_labelled: [{ labels: { type: 'a' }, value: 2 }] });
    expect(text).toMatch(/^# TYPE unit_requests_total counter$/m);
    expect(text).toMatch(/^unit_requests_total\{endpoint="\/v1\/x",status="200"\} 3$/m);
    expect(text).toMatch(/^unit_duration_ms_bucket\{le="10",endpoint="\/v1\/x"\} 1$/m);
    expect(text).toMatch(/^unit_duration_ms_bucket\{le="5",endpoint="\/v1\/x"\} 0$/m);
    expect(text).toMatch(/^unit_gauge 5$/m);
    expect(text).toMatch(/^unit_labelled\{type="a"\} 2$/m);
    // A caller's wrong label set is dropped, never thrown into a request.
    expect(() => inc('unit_requests_total', { other: 'x' })).not.toThrow();
  });

  it('GenAI histograms: token usage by type, and a stream time to first token and per output token', async () => {
    const usage = { promptTokens: 90, completionTokens: 11, cacheReadTokens: 10, cacheWriteTokens: 0 };
    observeGenAi(
      {
        endpoint: '/v1/chat/completions',
        stream: true,
        status: 200,
        model: { name: 'm1' },
        channel: 'c1',
        charge: { usage },
        firstTokenMs: 200,
      },
      1200,
    );
    const text = await renderMetrics();
    const l = 'gen_ai_response_model="m1",channel="c1"';
    expect(text).toContain(`gen_ai_client_token_usage_sum{gen_ai_token_type="input",${l}} 100`);
    expect(text).toContain(`gen_ai_client_token_usage_sum{gen_ai_token_type="output",${l}} 11`);
    expect(text).toContain(`gen_ai_server_time_to_first_token_seconds_sum{${l}} 0.2`);
    expect(text).toContain(`gen_ai_server_time_per_output_token_seconds_sum{${l}} 0.1`);
  });
});

describe('tracing switch', () => {
  it('off unless an OTLP endpoint is set; disabled by OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(otlpProtocol({})).toBe('http/protobuf');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
  });

  it('as the specification reads them: only OTEL_SDK_DISABLED=true disables; an explicit exporter turns tracing on without an endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(tracingConfigured({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingConfigured({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingConfigured({ ...endpoint, OTEL_SDK_DISABLED: '1' })).toBe(true);
    expect(tracingConfigured({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp, none' })).toBe(false);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(false);
    expect(tracingConfigured({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(false);
  });

  it('grpc (or any other protocol) falls back to http/protobuf with a warning naming the variable', () => {
    const err: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('http/protobuf');
    expect(otlpProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/thrift' })).toBe('http/protobuf');
    const lines = err.map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ level: 'warn', variable: 'OTEL_EXPORTER_OTLP_PROTOCOL', requested: 'grpc', using: 'http/protobuf' });
    expect(lines[0].msg).toContain('4318');
    expect(lines[1]).toMatchObject({ level: 'warn', variable: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', requested: 'http/thrift' });
  });

  it('OTEL_PROPAGATORS: tracecontext and baggage by default, none, and names without an installed propagator left out', () => {
    expect(propagatorsOf({})).toEqual({ use: ['tracecontext', 'baggage'], unsupported: [] });
    expect(propagatorsOf({ OTEL_PROPAGATORS: 'tracecontext' })).toEqual({ use: ['tracecontext'], unsupported: [] });
    expect(propagatorsOf({ OTEL_PROPAGATORS: ' Baggage , tracecontext ' })).toEqual({ use: ['tracecontext', 'baggage'], unsupported: [] });
    expect(propagatorsOf({ OTEL_PROPAGATORS: 'none' })).toEqual({ use: [], unsupported: [] });
    expect(propagatorsOf({ OTEL_PROPAGATORS: 'b3,tracecontext,xray,b3' })).toEqual({ use: ['tracecontext'], unsupported: ['b3', 'xray'] });
  });

  it('off: initTracing loads nothing and a request gets no trace', async () => {
    expect(await initTracing({})).toBe(false);
    expect(
      startRequestTrace('POST', '/v1/chat/completions', '/v1/chat/completions', { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` }),
    ).toBeUndefined();
  });
});

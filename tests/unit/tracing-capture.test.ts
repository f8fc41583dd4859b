// Tracing in-process with the real SDK, exporting to a local OTLP receiver: prompt and completion
// text reach a span only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; a sampler of
// always_off exports nothing but still propagates the trace upstream.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { flushTracing, startRequestTrace } from '@/lib/telemetry/tracing';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { servedRequest, startInProcessTracing } from '../support/in-process-tracing';

let receiver: OtlpReceiver;
let stopTracing: () => Promise<void>;
const served = servedRequest();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stopTracing = await startInProcessTracing({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
  });
});

afterAll(async () => {
  await stopTracing?.();
  await receiver?.close();
});

it('with content capture opted in, the request span carries the messages, the system prompt and the completion', async () => {
  const traceId = 'a'.repeat(32);
  const trace = startRequestTrace('POST', '/v1/chat/completions', '/v1/chat/completions', { traceparent: `00-${traceId}-${'b'.repeat(16)}-01` })!;
  expect(trace.captureContent).toBe(true);
  trace.input({ model: 'gpt-4o-mini', system: 'be brief', messages: [{ role: 'user', content: 'what is two and two' }] });
  const attempt = trace.attempt({ name: 'openai-1', protocol: 'openai' }, 'gpt-4o-mini', 'chat', 1);
  const headers = attempt.inject({ 'content-type': 'application/json' });
  expect(headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  attempt.end({ ok: true, status: 200 });
  trace.completion('four');
  trace.end(served);
  await flushTracing();
  const root = receiver.spans.find((s) => s.traceId === traceId && s.kind === 2)!;
  expect(JSON.parse(String(root.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', content: 'what is two and two' }]);
  expect(root.attributes['gen_ai.system_instructions']).toBe('"be brief"');
  expect(JSON.parse(String(root.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'four' }] }]);
  expect(root.serviceName).toBe('model-gateway');
  const child = receiver.spans.find((s) => s.traceId === traceId && s.kind === 3)!;
  expect(headers.traceparent).toBe(`00-${traceId}-${child.spanId}-01`);
});

it('a client trace not sampled (flag 00) is followed: nothing exported, the upstream still gets the trace id', async () => {
  const traceId = 'c'.repeat(32);
  const trace = startRequestTrace('POST', '/v1/chat/completions', '/v1/chat/completions', { traceparent: `00-${traceId}-${'d'.repeat(16)}-00` })!;
  const attempt = trace.attempt({ name: 'openai-1', protocol: 'openai' }, 'gpt-4o-mini', 'chat', 1);
  expect(attempt.inject({}).traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  attempt.end({ ok: true, status: 200 });
  trace.end(served);
  await flushTracing();
  expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
});

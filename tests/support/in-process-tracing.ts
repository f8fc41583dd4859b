// Tracing started in this process with the real SDK (lib/telemetry/tracing.ts), for the unit tests
// and `npm run bench:telemetry`: the SDK reads process.env itself, so the variables are set there
// for the run and put back by the returned stop. And one served request's record, as the pipeline
// hands it to the request span.
import { initTracing, shutdownTracing, type TracedRequest } from '@/lib/telemetry/tracing';

/** Starts tracing with these OTEL_* variables; the returned function shuts it down and restores the environment. */
export async function startInProcessTracing(vars: Record<string, string>): Promise<() => Promise<void>> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  if (!(await initTracing())) throw new Error(`tracing did not start with ${JSON.stringify(vars)}`);
  return async () => {
    await shutdownTracing();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** A chat completion served by `openai-1` on the first attempt (what the request span reads at the end). */
export function servedRequest(overrides: Partial<TracedRequest> = {}): TracedRequest & { elapsedMs: () => number } {
  return {
    requestId: 'req_test',
    endpoint: '/v1/chat/completions',
    surface: 'openai',
    stream: false,
    status: 200,
    outcome: 'ok',
    errorCode: null,
    modelRequested: 'gpt-4o-mini',
    model: { name: 'gpt-4o-mini' },
    channel: 'openai-1',
    charge: { usage: { promptTokens: 12, completionTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    firstTokenMs: 3,
    attempts: [{}],
    routeReason: null,
    elapsedMs: () => 40,
    ...overrides,
  };
}

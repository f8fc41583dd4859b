// runPipeline on its own: a fake request and sink in memory, fake upstreams over HTTP, and the
// caller and the limits stubbed (no database, no Redis). What a client sees (status, headers,
// body, trailers) and what the log row records, for a reply, a stream, a fallback, the caller's
// error passed through, and a client that left.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '@/lib/auth/principal';
import type { LogRecord } from '@/lib/billing/writer';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { startFakeUpstream, DEFAULT_REPLY, type FakeUpstream } from '../support/fake-upstream';
import { testConfig } from '../support/gateway';

const logged: LogRecord[] = [];
const released: { cost: bigint; tokens: number }[] = [];

const principal: Principal = {
  keyId: 'key_1',
  keyHash: 'h',
  userId: 'user_1',
  tier: 'free',
  suspended: false,
  limits: null,
  denyKeys: [],
  guard: null,
};

vi.mock('@/lib/auth/principal', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/lib/auth/principal')>()),
  authenticate: async () => principal,
}));
vi.mock('@/lib/billing/writer', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/lib/billing/writer')>()),
  enqueueLog: (row: LogRecord) => void logged.push(row),
  logQueueFull: () => false,
}));
vi.mock('@/lib/gateway/admission', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/lib/gateway/admission')>()),
  startAdmission: (a: { reserve: bigint; leaseId: string }) => ({
    speculative: false,
    admission: Promise.resolve({
      leaseId: a.leaseId,
      userId: 'user_1',
      concurrencyKeys: [],
      reserved: a.reserve,
      headers: { 'x-ratelimit-limit-requests': '60' },
      renewedAt: 0,
    }),
  }),
  release: async (_a: unknown, cost: bigint, tokens: number) => void released.push({ cost, tokens }),
  countRefused: async () => null,
  checkDenied: async (p: Principal) => p,
  expireLeases: () => undefined,
}));

const { buildConfig } = await import('@/lib/config');
const { newContext, finish } = await import('@/lib/gateway/context');
const { clientLeft, fail } = await import('@/lib/gateway/answer');
const { runPipeline } = await import('@/lib/gateway/pipeline');
const { openaiChatSurface } = await import('@/lib/gateway/surfaces/openai-chat');
const { openaiProtocol } = await import('@/lib/gateway/surfaces/protocol');

/** A request as an adapter would hand it over, its body in memory. */
function fakeRequest(body: unknown, abort?: { aborted: boolean }): GatewayRequest {
  const raw = Buffer.from(JSON.stringify(body));
  const signal = abort ?? { aborted: false };
  return {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    ip: '127.0.0.1',
    readBody: async () => raw,
    signal: {
      get aborted() {
        return signal.aborted;
      },
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
    },
  };
}

/** A sink that keeps what the client would receive. */
class MemorySink implements ResponseSink {
  status = 0;
  headers: Record<string, string> = {};
  trailers: Record<string, string> | undefined;
  body = '';
  ended = false;
  get started() {
    return this.status !== 0;
  }
  start(status: number, headers: Record<string, string>) {
    this.status = status;
    this.headers = headers;
  }
  async write(chunk: string | Uint8Array) {
    this.body += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  }
  end(chunk?: string | Uint8Array, trailers?: Record<string, string>) {
    if (chunk) this.body += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    this.trailers = trailers;
    this.ended = true;
  }
}

let up1: FakeUpstream;
let up2: FakeUpstream;
let cfg: ReturnType<typeof buildConfig>;

beforeAll(async () => {
  up1 = await startFakeUpstream();
  up2 = await startFakeUpstream();
  cfg = buildConfig(testConfig({ openaiUrls: [up1.url, up2.url], channelPrefix: 'pipeline-unit' }));
});
afterAll(async () => {
  await up1.close();
  await up2.close();
});
beforeEach(() => {
  up1.reset();
  up2.reset();
  logged.length = 0;
  released.length = 0;
});

/** One request through the pipeline as the handler runs it. */
async function run(body: unknown, abort?: { aborted: boolean }) {
  const ctx = newContext(openaiProtocol, '/v1/chat/completions', cfg);
  const sink = new MemorySink();
  const req = fakeRequest(body, abort);
  try {
    await runPipeline(ctx, req, sink, openaiChatSurface);
  } catch (err) {
    if (req.signal.aborted && !sink.started) clientLeft(ctx, sink);
    else await fail(ctx, sink, err);
  } finally {
    await finish(ctx);
  }
  return { ctx, sink, row: logged.at(-1) };
}

const chat = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('runPipeline', () => {
  it('answers a reply with its cost in the headers, releases the reservation at that cost and logs it', async () => {
    const { sink, row } = await run(chat());
    expect(sink.status).toBe(200);
    const reply = JSON.parse(sink.body);
    expect(reply.choices[0].message.content).toBe(DEFAULT_REPLY);
    expect(sink.headers['x-request-id']).toMatch(/^req_/);
    expect(sink.headers['x-ratelimit-limit-requests']).toBe('60');
    expect(sink.headers['x-service-provider']).not.toBe('none');
    expect(row?.status).toBe(200);
    expect(row?.outcome).toBe('ok');
    expect(row?.costPico).toBeGreaterThan(0n);
    // The one settlement: the header, the release and the log row all carry the same cost.
    expect(sink.headers['x-service-cost-usd']).not.toBe('0');
    expect(released).toEqual([{ cost: row!.costPico, tokens: row!.promptTokens + row!.completionTokens }]);
  });

  it('relays a stream and ends it with the cost trailers', async () => {
    const { sink, row } = await run(chat({ stream: true, stream_options: { include_usage: true } }));
    expect(sink.status).toBe(200);
    expect(sink.headers['x-service-cost-usd']).toBe('pending');
    expect(sink.body).toContain('data: [DONE]');
    expect(sink.trailers?.['x-service-cost-usd']).toBeDefined();
    expect(row?.stream).toBe(true);
    expect(BigInt(Math.round(Number(sink.trailers!['x-service-cost-usd']) * 1e12))).toBe(row!.costPico);
  });

  it('falls back to the next channel when the first one fails, and logs both attempts', async () => {
    up1.setDefault({ type: 'status', status: 500 });
    const { sink, row } = await run(chat());
    expect(sink.status).toBe(200);
    expect((row?.attempts as { ok: boolean; status?: number }[]).map((a) => [a.ok, a.status])).toEqual([
      [false, 500],
      [true, 200],
    ]);
  });

  it("passes the caller's error through in the client's envelope, not retried and not billed", async () => {
    up1.setDefault({ type: 'status', status: 400, body: { error: { message: 'bad thing', type: 'invalid_request_error' } } });
    const { sink, row } = await run(chat());
    expect(sink.status).toBe(400);
    expect(JSON.parse(sink.body).error.message).toContain('bad thing');
    expect(sink.headers['x-should-retry']).toBe('false');
    expect(up2.requests).toHaveLength(0);
    expect(row?.errorCode).toBe('upstream_rejected');
    expect(row?.costPico).toBe(0n);
  });

  it('an unknown model is the 400 naming where the models are listed', async () => {
    const { sink, row } = await run(chat({ model: 'no-such-model' }));
    expect(sink.status).toBe(400);
    expect(JSON.parse(sink.body).error.message).toContain('GET /v1/models');
    expect(row?.errorCode).toBe('model_not_found');
  });

  it('a client that left before the answer: nothing is sent upstream or to it, and the log says 499 client_closed', async () => {
    const { sink, row } = await run(chat(), { aborted: true });
    expect(sink.started).toBe(false);
    expect(sink.body).toBe('');
    expect(up1.received() + up2.received()).toBe(0);
    expect(row?.status).toBe(499);
    expect(row?.outcome).toBe('client_closed');
  });
});

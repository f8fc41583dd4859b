// Rate limits end to end against the production build (lean path; Next route handlers where the
// adapters differ) and the real Redis: every limit
// at its exact boundary, limits shared by two gateway processes, concurrency leases freed on client
// abort and expiring after a crash, the daily token quota, the embeddings limit and the per-IP
// limits of login and register. (Redis outages are covered by tests/unit/limits.test.ts.)

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'deepseek-chat', messages: [{ role: 'user', content: 'Hi' }], ...extra });

let up: FakeUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;
/** The same config on the Next route-handler path. */
let gwNext: RunningGateway;
/** tokens_per_day 50 for free accounts, embeddings_rpm 3, X-Forwarded-For trusted (one client IP per test). */
let gwSmall: RunningGateway;
let baseConfig: Record<string, unknown>;
let redis: Redis;

function chat(gw: RunningGateway, apiKey: string, body: unknown = chatBody(), init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
    ...init,
  });
}

interface ErrorBody {
  error: { message: string; type: string; param: unknown; code: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Exact counts across requests assume the limiter stays on Redis. The gateway's limiter answers
 * in-process (per instance) while a Redis call exceeds its 100-150 ms bound, which happens on a
 * heavily loaded machine (the process waits for CPU). Such a run is retried with a fresh account
 * (LIMITS_TEST_RETRY=0 disables that), and every count assertion shows the limiter log on failure.
 */
const LOADED_MACHINE_RETRY = { retry: Number(process.env.LIMITS_TEST_RETRY ?? 2) };

function limiterLog(...gws: RunningGateway[]): string {
  const lines = gws.flatMap((g) =>
    g
      .output()
      .split('\n')
      .filter((l) => l.includes('limiter')),
  );
  return lines.length ? `limiter log:\n${lines.join('\n')}` : 'limiter stayed on Redis';
}

/** Opens a streaming request and waits until its first bytes have arrived. */
async function openStream(gw: RunningGateway, apiKey: string): Promise<{ res: Response; controller: AbortController }> {
  const controller = new AbortController();
  const res = await chat(gw, apiKey, chatBody({ stream: true }), { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toMatch(/^data: /);
  reader.releaseLock();
  return { res, controller };
}

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  up = await startFakeUpstream({ dims: { 'bge-m3': 1024, 'text-embedding-3-small': 1536 } });
  baseConfig = testConfig({ openaiUrls: [up.url] });
  const small = testConfig({ openaiUrls: [up.url], overrides: { limits: { embeddings_rpm: 3 } } });
  (small.tiers as { free: { tokens_per_day: number } }).free.tokens_per_day = 50;
  [gwA, gwB, gwNext, gwSmall] = await Promise.all([
    startGateway({ config: baseConfig }),
    startGateway({ config: baseConfig }),
    startGateway({ config: baseConfig, mode: 'next' }),
    startGateway({ config: small, env: { TRUST_PROXY: '1' } }),
  ]);
});

afterAll(async () => {
  await Promise.all([gwA?.stop(), gwB?.stop(), gwNext?.stop(), gwSmall?.stop()]);
  await up?.close();
  redis?.disconnect();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

beforeEach(() => {
  up.reset();
});

describe('requests per minute', () => {
  it('free tier: the 60th request is admitted, the 61st refused with 429 rate_limit and an accurate Retry-After', LOADED_MACHINE_RETRY, async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    let firstSent = 0;
    let firstAnswered = 0;
    for (let i = 1; i <= 60; i++) {
      const sent = Date.now();
      const res = await chat(gwA, acct.apiKey);
      if (i === 1) [firstSent, firstAnswered] = [sent, Date.now()];
      expect(res.status, `request ${i}\n${limiterLog(gwA)}`).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('60');
      expect(res.headers.get('x-ratelimit-remaining-requests'), limiterLog(gwA)).toBe(String(60 - i));
      expect(res.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|\d+s|\d+m\d+s)$/);
      await res.arrayBuffer();
    }
    const sent = Date.now();
    const res = await chat(gwA, acct.apiKey);
    const answered = Date.now();
    expect(res.status, limiterLog(gwA)).toBe(429);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.type).toBe('rate_limit');
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('tier free: 60 requests per minute');
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    const retryAfter = res.headers.get('retry-after')!;
    expect(retryAfter).toMatch(/^\d+$/);
    // The first request's slot frees 60 s after it was admitted (somewhere between its send and
    // its answer); the refusal was computed between this request's send and answer.
    const earliest = Math.ceil((firstSent - 1 + 60_000 - answered) / 1000);
    // The window counts in 1 s sub-buckets (lib/limits): the slot may free up to one of them later.
    const latest = Math.ceil((firstAnswered + 1 + 61_000 - sent) / 1000);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(earliest);
    expect(Number(retryAfter)).toBeLessThanOrEqual(latest);
    expect(Number(res.headers.get('retry-after-ms'))).toBeLessThanOrEqual(Number(retryAfter) * 1000);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(res.headers.get('x-should-retry')).not.toBe('false');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(up.requests).toHaveLength(60);
  });

  it('two gateway processes sharing one Redis enforce one limit together', LOADED_MACHINE_RETRY, async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      const res = await chat(i % 2 === 0 ? gwA : gwB, acct.apiKey);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.filter((s) => s === 200).length, `${statuses.join(',')}\n${limiterLog(gwA, gwB)}`).toBe(60);
    expect(statuses.at(-1), `${statuses.join(',')}\n${limiterLog(gwA, gwB)}`).toBe(429);
    // And the other process refuses too.
    expect((await chat(gwB, acct.apiKey)).status).toBe(429);
  });
});

describe('concurrency', () => {
  it('a burst of 200 concurrent requests against a cap of 2 admits exactly 2', LOADED_MACHINE_RETRY, async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    // Each admitted request holds its slot for 1 s upstream (longer than the 300 ms of the issue: all
    // 200 requests must arrive while the first two still hold their slots, even on a slow machine).
    up.setDefault({ type: 'delay', ms: 1000 });
    const results = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const res = await chat(gwA, acct.apiKey);
        return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') };
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok.length, limiterLog(gwA)).toBe(2);
    expect(refused).toHaveLength(198);
    for (const r of refused) {
      expect((JSON.parse(r.body) as ErrorBody).error.message).toContain('tier free: 2 concurrent requests');
      expect(r.retryAfter).toMatch(/^\d+$/);
    }
    expect(up.requests).toHaveLength(2);
    // Both slots are free again once the two finished.
    up.setDefault({ type: 'ok' });
    const [a, b] = await Promise.all([chat(gwA, acct.apiKey), chat(gwA, acct.apiKey)]);
    expect([a.status, b.status]).toEqual([200, 200]);
  });

  it.each(['lean', 'next'])('a client abort mid-stream frees the concurrency slot at once (%s)', LOADED_MACHINE_RETRY, async (mode) => {
    const gw = mode === 'lean' ? gwA : gwNext;
    const acct = await createAccount({ balanceUsd: '10' });
    // The stalled upstream would end these streams only at its idle timeout (3 s).
    up.queue({ type: 'stall', afterChunks: 2 }, { type: 'stall', afterChunks: 2 });
    const s1 = await openStream(gw, acct.apiKey);
    const s2 = await openStream(gw, acct.apiKey);
    const full = await chat(gw, acct.apiKey);
    expect(full.status).toBe(429);
    expect(((await full.json()) as ErrorBody).error.message).toContain('concurrent requests');

    s1.controller.abort();
    s2.controller.abort();
    await sleep(200);
    const t = Date.now();
    const [a, b] = await Promise.all([chat(gw, acct.apiKey), chat(gw, acct.apiKey)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it('leases of a crashed gateway expire after the lease TTL (GATEWAY_LEASE_TTL_MS), while live streams renew theirs', LOADED_MACHINE_RETRY, async () => {
    const config = structuredClone(baseConfig);
    for (const ch of config.channels as { timeouts: Record<string, number> }[]) ch.timeouts = { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 20_000 };
    const [victim, acct] = await Promise.all([startGateway({ config, env: { GATEWAY_LEASE_TTL_MS: '2000' } }), createAccount({ balanceUsd: '10' })]);
    try {
      up.queue({ type: 'stall', afterChunks: 2 }, { type: 'stall', afterChunks: 2 });
      const streams = [await openStream(victim, acct.apiKey), await openStream(victim, acct.apiKey)];
      // Longer than the TTL: the live streams have renewed their leases.
      await sleep(2600);
      expect((await chat(gwA, acct.apiKey)).status, limiterLog(victim)).toBe(429);

      await victim.stop('SIGKILL');
      const killedAt = Date.now();
      expect((await chat(gwA, acct.apiKey)).status).toBe(429);
      let freedAfter = -1;
      while (Date.now() - killedAt < 5000) {
        const res = await chat(gwA, acct.apiKey);
        await res.arrayBuffer();
        if (res.status === 200) {
          freedAfter = Date.now() - killedAt;
          break;
        }
        await sleep(100);
      }
      expect(freedAfter).toBeGreaterThan(0);
      expect(freedAfter).toBeLessThanOrEqual(2600);
      for (const s of streams) await s.res.body!.cancel().catch(() => undefined);
    } finally {
      // (stop() of a process that already died by a signal would wait for an exit that has happened)
      if (victim.process.exitCode === null && victim.process.signalCode === null) await victim.stop('SIGKILL');
    }
  });
});

describe('tokens per day', () => {
  it('counts the real usage after each reply and refuses once the quota is used, naming it', LOADED_MACHINE_RETRY, async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const quotaUsed = async () => Object.values(await redis.hgetall(`gw:{u:${acct.userId}}:tpd`)).reduce((sum, v) => sum + Number(v), 0);
    let used = 0;
    let admitted = 0;
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const res = await chat(gwSmall, acct.apiKey);
      if (res.status === 429) {
        refused = res;
        break;
      }
      expect(res.status).toBe(200);
      expect(used).toBeLessThan(50); // admitted only while the quota had room
      expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('50');
      expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe(String(Math.max(0, 50 - used)));
      const body = (await res.json()) as { usage: { total_tokens: number } };
      used += body.usage.total_tokens;
      admitted++;
      // The real usage is counted in Redis when the reply is settled, just after it is sent.
      await waitFor(async () => (await quotaUsed()) === used).catch(async () => {
        throw new Error(`quota counts ${await quotaUsed()} tokens, the replies reported ${used}\n${limiterLog(gwSmall)}`);
      });
    }
    expect(admitted).toBeGreaterThan(1);
    expect(used).toBeGreaterThanOrEqual(50);
    expect(refused, limiterLog(gwSmall)).toBeDefined();
    const body = (await refused!.json()) as ErrorBody;
    expect(body.error.type).toBe('rate_limit');
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('tier free: 50 tokens per day');
    expect(refused!.headers.get('retry-after')).toMatch(/^\d+$/);
    // A daily quota's wait is long: SDKs must not sleep on it.
    expect(refused!.headers.get('x-should-retry')).toBe('false');
    expect(refused!.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(up.requests).toHaveLength(admitted);
  });
});

describe('embeddings', () => {
  it('the embeddings endpoint has its own requests-per-minute limit', LOADED_MACHINE_RETRY, async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const embed = () =>
      fetch(`${gwSmall.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.apiKey}` },
        body: JSON.stringify({ model: 'bge-m3', input: 'hello', encoding_format: 'float' }),
      });
    for (let i = 1; i <= 3; i++) {
      const res = await embed();
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining-requests')).toBe(String(3 - i));
      await res.arrayBuffer();
    }
    const res = await embed();
    expect(res.status, limiterLog(gwSmall)).toBe(429);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.type).toBe('rate_limit');
    expect(body.error.message).toContain('embeddings: 3 requests per minute');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(55);
    // Chat is a separate limit: still admitted.
    expect((await chat(gwSmall, acct.apiKey)).status).toBe(200);
  });
});

describe('per-IP limits of the account endpoints', () => {
  const post = (gw: RunningGateway, path: string, body: unknown, ip?: string) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}) },
      body: JSON.stringify(body),
    });
  const randomIp = () => `10.${[...randomBytes(3)].join('.')}`;

  it('login: 10 per IP per minute, the 11th is 429 with Retry-After; another IP is unaffected', LOADED_MACHINE_RETRY, async () => {
    const ip = randomIp();
    const creds = { email: `nobody-${randomBytes(4).toString('hex')}@example.com`, password: 'wrong-password-1' };
    for (let i = 1; i <= 10; i++) {
      const res = await post(gwSmall, '/api/auth/login', creds, ip);
      expect(res.status, `login ${i}`).toBe(401);
    }
    const res = await post(gwSmall, '/api/auth/login', creds, ip);
    expect(res.status, limiterLog(gwSmall)).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('10 per IP per minute');
    expect((await post(gwSmall, '/api/auth/login', creds, randomIp())).status).toBe(401);
  });

  it('login: without a trusted proxy a spoofed X-Forwarded-For does not dodge the limit', LOADED_MACHINE_RETRY, async () => {
    await redis.del('gw:ip:login:127.0.0.1');
    // A fresh email each try: the per-account failure throttle (10 per 15 minutes) would otherwise
    // carry failures over from a retry or an earlier run sharing this Redis database.
    const creds = { email: `nobody-${randomBytes(4).toString('hex')}@example.com`, password: 'wrong-password-1' };
    for (let i = 1; i <= 10; i++) {
      const res = await post(gwA, '/api/auth/login', creds, randomIp());
      expect(res.status, `login ${i}`).toBe(401);
    }
    expect((await post(gwA, '/api/auth/login', creds, randomIp())).status, limiterLog(gwA)).toBe(429);
    await redis.del('gw:ip:login:127.0.0.1');
  });

  it('register: 3 per IP per minute, the 4th is 429 with Retry-After', LOADED_MACHINE_RETRY, async () => {
    const ip = randomIp();
    const account = () => ({ email: `reg-${randomBytes(5).toString('hex')}@example.com`, password: 'correct-horse-9' });
    for (let i = 1; i <= 3; i++) {
      const res = await post(gwSmall, '/api/auth/register', account(), ip);
      expect(res.status, `register ${i}: ${await res.clone().text()}`).toBe(201);
    }
    const res = await post(gwSmall, '/api/auth/register', account(), ip);
    expect(res.status, limiterLog(gwSmall)).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('3 per IP per minute');
  });
});

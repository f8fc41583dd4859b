// Soak test of the production gateway (`node dist/server.mjs`) against a misbehaving upstream:
// 10,000 faulty requests at concurrency 50, after a 1,000-request warm-up, and the process gauges of
// GET /metrics before and after. Issue #7: "no leaked sockets, timers or concurrency slots - measure:
// memory and open handles flat after 10,000 faulty requests".
//
// Set-up: channel openai-1 (the faulty fake) serves gpt-4o-mini and deepseek-chat; openai-2 (a
// healthy fake) serves gpt-4o-mini only. So a fault before the first byte is a fallback 200 for
// gpt-4o-mini and a 502 all_channels_failed for deepseek-chat; a fault after it is an error chunk.
// Every request carries its plan index in its prompt and the fake picks the fault from it, so the
// expected answer of each request is known although 50 run at once.
//
// Measured after each phase once the gateway is idle (no pipeline in flight, log queue empty) and
// idle keep-alive sockets have timed out (the fake closes them after 5 s, the load client after 1 s),
// with a full GC right before the scrape (the child runs with --expose-gc, METRICS_ALLOW_GC=1):
//   - active handles (process.getActiveResourcesInfo: sockets, servers, ref'd timers) back to the
//     baseline within a small constant, no Timeout growth, no upstream socket left open;
//   - upstream sockets during the load bounded by the keep-alive pool (sampled every 0.5 s);
//   - every concurrency lease released (the account's lease set in Redis is empty);
//   - heap used after GC grows less than HEAP_GROWTH_MAX_MB, RSS less than RSS_GROWTH_MAX_MB;
//   - every request got its documented status and body, none hung, no 500; every request has its
//     log row, and the balance moved by exactly the sum of the logged costs.

import { Redis } from 'ioredis';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { countTokens, startFakeUpstream, type Fault, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/limits/runtime';
import { PICO, pico } from '../support/money';

const WARM = 1_000;
const N = 10_000;
const C = 50;
/**
 * First-byte and idle timeout of the channels: at least 150 ms, more on a machine whose upstream
 * answers slower under this load (calibrate(): 5 times the p99 of the warm fake upstream's first
 * byte at c=50, so that a healthy reply is not timed out while the other core is busy).
 */
let TIMEOUT_MS = 150;
/**
 * Heap used after a full GC may grow by this much over 10,000 requests. Measured: +0.0 and +0.06 MB
 * (the warm-up has compiled the code paths and filled the bounded state: metric label sets, caches).
 * A leak of 300 bytes per request would exceed it; leaking each request's lease-renewal timer (with
 * its admission record) was measured at +5.6 MB, and also shows as Timeout handles.
 */
const HEAP_GROWTH_MAX_MB = 3;
/** RSS does not shrink after a GC (freed pages are kept by the allocator), so the bound is looser. */
const RSS_GROWTH_MAX_MB = 48;
const METRICS_TOKEN = 'soak-metrics-token';

/**
 * 'either': a malformed frame right after the first one is caught before the first byte reached the
 * client when both arrive in one read (then it is a before-first-byte fault), after it otherwise.
 */
type Kind = 'ok' | 'before-first-byte' | 'mid-stream' | 'either' | 'abort';
interface Step {
  name: string;
  fault: Fault;
  /** true/false: always; undefined: half the time */
  stream?: boolean;
  weight: number;
}

// The mix. "before-first-byte" faults fall back (gpt-4o-mini) or give 502 (deepseek-chat).
const steps: Step[] = [
  { name: 'ok', fault: { type: 'ok' }, weight: 8 },
  { name: 'no usage', fault: { type: 'no-usage' }, weight: 4 },
  { name: 'stream without [DONE]', fault: { type: 'no-done' }, stream: true, weight: 5 },
  { name: '500', fault: { type: 'status', status: 500 }, weight: 8 },
  { name: '503', fault: { type: 'status', status: 503 }, weight: 6 },
  { name: '429 with Retry-After', fault: { type: 'status', status: 429, headers: { 'retry-after': '3' } }, weight: 8 },
  { name: 'malformed JSON', fault: { type: 'malformed' }, weight: 8 },
  { name: 'connection dropped on request', fault: { type: 'refuse' }, weight: 6 },
  { name: 'connection dropped mid-body / before the first chunk', fault: { type: 'cut', afterChunks: 0 }, weight: 6 },
  { name: 'stream cut mid-way', fault: { type: 'cut', afterChunks: 3 }, stream: true, weight: 6 },
  { name: 'first-byte timeout', fault: { type: 'hang' }, weight: 6 },
  { name: 'idle timeout before the first chunk', fault: { type: 'stall', afterChunks: 0 }, weight: 5 },
  { name: 'idle timeout mid-stream', fault: { type: 'stall', afterChunks: 3 }, stream: true, weight: 5 },
  { name: 'client aborts mid-stream', fault: { type: 'ok' }, stream: true, weight: 7 },
];

interface Planned {
  step: Step;
  stream: boolean;
  model: 'gpt-4o-mini' | 'deepseek-chat';
  kind: Kind;
}

/** Main-phase streams planned to break mid-way, and how many of them the client saw break mid-stream. */
const midStreamPlanned = { total: 0, ended: 0 };

function kindOf(step: Step, stream: boolean): Kind {
  if (step.name === 'client aborts mid-stream') return 'abort';
  const f = step.fault;
  if (f.type === 'ok' || f.type === 'no-usage' || f.type === 'no-done') return 'ok';
  if (f.type === 'malformed') return stream ? 'either' : 'before-first-byte';
  if ((f.type === 'cut' || f.type === 'stall') && f.afterChunks > 0) return stream ? 'mid-stream' : 'before-first-byte';
  return 'before-first-byte';
}

// Seeded PRNG (mulberry32): the same plan every run.
let seed = 0x50a4f417;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const totalWeight = steps.reduce((s, x) => s + x.weight, 0);
const plan: Planned[] = Array.from({ length: WARM + N }, () => {
  let r = rand() * totalWeight;
  const step = steps.find((s) => (r -= s.weight) < 0) ?? steps[0];
  const stream = step.stream ?? rand() < 0.5;
  const model = step.name === 'client aborts mid-stream' || rand() < 0.6 ? 'gpt-4o-mini' : 'deepseek-chat';
  return { step, stream, model, kind: kindOf(step, stream) };
});
// A long echoed reply for the aborted streams, so the client leaves while the stream is still going:
// 400 chunks 2 ms apart last 0.8 s or more, several times what a busy machine (a CPU hog on the
// other core) takes between the first chunk and the client's abort (with 60 chunks, 1 of 920
// aborts once came after the stream had ended).
const LONG_ECHO = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');

function faultFor(req: RecordedRequest): Fault | undefined {
  const messages = (req.json as { messages?: { content?: unknown }[] } | undefined)?.messages;
  const content = messages?.at(-1)?.content;
  const m = typeof content === 'string' ? /^soak:(\d+)/.exec(content) : null;
  return m ? plan[Number(m[1])]?.step.fault : undefined;
}

let db: Awaited<ReturnType<typeof getDb>>;
let redis: Redis;
let bad: FakeUpstream;
let good: FakeUpstream;
let gw: RunningGateway;
let acct: TestAccount;
let client: Agent;

beforeAll(async () => {
  db = await getDb();
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  countTokens('warm up the fake upstream tokenizer');
  [bad, good] = await Promise.all([startFakeUpstream({ chunkDelayMs: 2, faultFor, record: false }), startFakeUpstream({ record: false })]);
  await calibrate(bad.url); // the first round warms the fake upstream (its code and tokenizer)
  TIMEOUT_MS = Math.max(TIMEOUT_MS, Math.ceil(5 * (await calibrate(bad.url))));
  const cfg = testConfig({
    openaiUrls: [bad.url, good.url],
    overrides: { circuit_breaker: { failures: 1_000_000, cooldown_ms: 1000 } },
  }) as Record<string, any>;
  cfg.channels[0].models = ['gpt-4o-mini', 'deepseek-chat'];
  cfg.channels[1].models = ['gpt-4o-mini'];
  for (const ch of cfg.channels) ch.timeouts = { connect_ms: 500, first_byte_ms: TIMEOUT_MS, idle_ms: TIMEOUT_MS };
  // 11,000 requests in well under a minute: above the enterprise tier's 10,000 rpm.
  cfg.tiers.enterprise = { rpm: 1_000_000, rph: 10_000_000, concurrency: 256 };
  cfg.models = cfg.models.map((m: { name: string }) => ({ ...m, fallback_models: [] }));
  gw = await startGateway({ config: cfg, env: { METRICS_TOKEN, METRICS_ALLOW_GC: '1' }, nodeArgs: ['--expose-gc'] });
  acct = await createAccount({ tier: 'enterprise', balanceUsd: '100' });
  // The load client's idle sockets close after 1 s, so they do not count as the gateway's open handles.
  client = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });
}, 120_000);

/** p99 ms to the response headers of a short streaming reply from `url`, 300 calls at c=C. */
async function calibrate(url: string): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 1000 });
  const times: number[] = [];
  let next = 0;
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'calibrate' }] });
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < 300) {
        next++;
        const t = performance.now();
        const res = await undiciFetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: 'Bearer calibrate', 'content-type': 'application/json' },
          body,
        });
        times.push(performance.now() - t);
        await res.text();
      }
    }),
  );
  await agent.close();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length * 0.99)];
}

afterAll(async () => {
  await gw?.stop('SIGKILL');
  await Promise.all([bad?.close(), good?.close()]);
  await client?.close();
  redis?.disconnect();
  await getLimiter().close();
  await db?.$disconnect();
});

type Scrape = Map<string, number>;

async function scrape(gc: boolean): Promise<Scrape> {
  const res = await fetch(`${gw.url}/metrics${gc ? '?gc=1' : ''}`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const out: Scrape = new Map();
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}
const sumOf = (s: Scrape, prefix: string) => [...s].filter(([k]) => k === prefix || k.startsWith(`${prefix}{`)).reduce((a, [, v]) => a + v, 0);
const resources = (s: Scrape) =>
  Object.fromEntries([...s].filter(([k]) => k.startsWith('nodejs_active_resources{')).map(([k, v]) => [/type="([^"]+)"/.exec(k)![1], v]));

/** Waits until nothing is in flight and the log queue is empty, then for idle sockets to time out. */
async function settle(): Promise<Scrape> {
  await waitFor(async () => {
    const s = await scrape(false);
    return s.get('gateway_requests_in_flight') === 0 && s.get('gateway_log_queue_length') === 0 && sumOf(s, 'gateway_upstream_requests_in_flight') === 0;
  }, 20_000);
  await new Promise((r) => setTimeout(r, 6_000)); // the fake's keep-alive timeout (5 s) plus a margin
  await scrape(true);
  return scrape(true);
}

interface Outcome {
  status: number;
  ok: boolean;
  /** what the client saw: fallback (served by openai-2 after a fault), failed (502), midstream (error chunk) */
  seen?: 'ok' | 'fallback' | 'failed' | 'midstream' | 'aborted';
  problem?: string;
}

async function run(i: number): Promise<Outcome> {
  const p = plan[i];
  const controller = new AbortController();
  const hung = setTimeout(() => controller.abort(new Error('hung')), 15_000);
  const content = `soak:${i}${p.kind === 'abort' ? ` ECHO: ${LONG_ECHO}` : ''}`;
  try {
    const res = await undiciFetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: client,
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: p.model,
        messages: [{ role: 'user', content }],
        ...(p.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
      signal: controller.signal,
    });
    if (p.kind === 'abort') {
      if (res.status !== 200) return { status: res.status, ok: false, problem: `abort case answered ${res.status}` };
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      await reader.cancel().catch(() => undefined);
      return { status: 200, ok: true, seen: 'aborted' };
    }
    const text = await res.text();
    const bad = (problem: string): Outcome => ({
      status: res.status,
      ok: false,
      problem: `${i} ${p.step.name} ${p.model} stream=${p.stream}: ${problem}: ${res.status} ${text.slice(0, 200)}`,
    });
    const midstream = res.status === 200 && p.stream && text.includes('data: {"error":');
    if (p.kind === 'mid-stream' && i >= WARM) midStreamPlanned.total++;
    // A stream that breaks after a few chunks is an error chunk to the client when those chunks
    // were relayed first. With speculative dispatch the break can come while the admission is
    // still awaited, before anything was relayed: then it is a failure before the first byte
    // (fallback, or 502 without one), as documented. Per request both are checked; in aggregate
    // nearly all must end mid-stream (below).
    if ((p.kind === 'mid-stream' || p.kind === 'either') && midstream) {
      if (p.kind === 'mid-stream' && i >= WARM) midStreamPlanned.ended++;
      if (res.status !== 200 || !res.headers.get('content-type')?.includes('text/event-stream')) return bad('expected a 200 stream');
      const errLine = text.split('\n').find((l) => l.startsWith('data: {"error":'));
      if (!errLine || text.includes('[DONE]')) return bad('expected an error chunk and no [DONE]');
      const err = (JSON.parse(errLine.slice(6)) as { error?: { code?: string; message?: string } }).error;
      if (err?.code !== 'upstream_error' || typeof err.message !== 'string') return bad('wrong error chunk');
      return { status: 200, ok: true, seen: 'midstream' };
    }
    if (p.kind !== 'ok' && p.model === 'deepseek-chat') {
      if (res.status !== 502) return bad('expected 502');
      if (!res.headers.get('content-type')?.includes('application/json')) return bad('502 not JSON');
      const err = (JSON.parse(text) as { error?: { code?: string; type?: string; message?: string; param?: unknown } }).error;
      if (err?.code !== 'all_channels_failed' || typeof err.message !== 'string' || typeof err.type !== 'string' || !('param' in err))
        return bad('wrong error envelope');
      if (res.headers.get('x-service-cost-usd') !== '0') return bad('a 502 was charged');
      return { status: 502, ok: true, seen: 'failed' };
    }
    if (res.status !== 200) return bad('expected 200');
    const fallback = p.kind !== 'ok';
    if (res.headers.get('x-service-provider') !== (fallback ? 'openai-2' : 'openai-1')) return bad('served by the wrong channel');
    const seen = fallback ? 'fallback' : 'ok';
    if (!p.stream) {
      const body = JSON.parse(text) as { choices?: { message?: { content?: string } }[] };
      if (typeof body.choices?.[0]?.message?.content !== 'string') return bad('no completion');
      if (res.headers.get('x-service-cost-usd') === '0') return bad('a reply was not charged');
      return { status: 200, ok: true, seen };
    }
    if (!text.trimEnd().endsWith('data: [DONE]') || text.includes('"error"')) return bad('expected a complete stream');
    if (!/"cost_usd":[0-9.]+/.test(text)) return bad('no cost in the usage chunk');
    return { status: 200, ok: true, seen };
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason instanceof Error && controller.signal.reason.message === 'hung') {
      return { status: 0, ok: false, problem: `${i} ${p.step.name} hung for 15 s` };
    }
    return { status: 0, ok: false, problem: `${i} ${p.step.name} ${p.model} stream=${p.stream}: ${String(err)}` };
  } finally {
    clearTimeout(hung);
  }
}

/** Runs plan[from, to) at concurrency C; returns the outcomes and the peak upstream sockets seen. */
async function load(from: number, to: number) {
  const outcomes: Outcome[] = [];
  let next = from;
  let peakSockets = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const s = await scrape(false);
      peakSockets = Math.max(peakSockets, ...[...s].filter(([k]) => k.startsWith('gateway_upstream_sockets{')).map(([, v]) => v));
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const started = Date.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < to) outcomes.push(await run(next++));
    }),
  );
  sampling = false;
  await sampler;
  return { outcomes, seconds: (Date.now() - started) / 1000, peakSockets };
}

describe(`${N.toLocaleString('en')} faulty requests at concurrency ${C}`, () => {
  it('leave handles, timers, sockets, leases and memory flat; every request answered as documented, logged and billed exactly', async () => {
    const warm = await load(0, WARM);
    expect(warm.outcomes.filter((o) => !o.ok).map((o) => o.problem)).toEqual([]);
    const base = await settle();

    const main = await load(WARM, WARM + N);
    const hot = await scrape(false);
    const after = await settle();

    const mb = (b: number) => (b / 2 ** 20).toFixed(2);
    const statuses: Record<number, number> = {};
    const seen: Record<string, number> = {};
    for (const o of main.outcomes) {
      statuses[o.status] = (statuses[o.status] ?? 0) + 1;
      if (o.seen) seen[o.seen] = (seen[o.seen] ?? 0) + 1;
    }
    const fig = {
      requests: `${N} in ${main.seconds.toFixed(1)} s (${Math.round(N / main.seconds)} req/s), statuses ${JSON.stringify(statuses)}, seen ${JSON.stringify(seen)}`,
      active_handles: `${base.get('nodejs_active_handles')} -> ${after.get('nodejs_active_handles')}`,
      resources_before: JSON.stringify(resources(base)),
      resources_after: JSON.stringify(resources(after)),
      upstream_sockets: `peak during load ${main.peakSockets} per channel, right after ${sumOf(hot, 'gateway_upstream_sockets')}, settled ${sumOf(base, 'gateway_upstream_sockets')} -> ${sumOf(after, 'gateway_upstream_sockets')}`,
      inbound_connections: `${base.get('http_server_connections')} -> ${after.get('http_server_connections')}`,
      heap_used_mb: `${mb(base.get('nodejs_heap_used_bytes')!)} -> ${mb(after.get('nodejs_heap_used_bytes')!)}`,
      rss_mb: `${mb(base.get('process_resident_memory_bytes')!)} -> ${mb(after.get('process_resident_memory_bytes')!)}`,
      limiter_fallback_calls: after.get('gateway_limiter_fallback_total'),
    };
    console.log(
      `soak: ${WARM} warm-up + ${N} faulty requests, c=${C}, timeouts ${TIMEOUT_MS} ms\n${Object.entries(fig)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}`,
    );

    // Every request got its documented answer; none hung, none was a 500.
    expect(main.outcomes).toHaveLength(N);
    expect(main.outcomes.filter((o) => !o.ok).map((o) => o.problem)).toEqual([]);
    expect(statuses[500] ?? 0).toBe(0);
    expect(midStreamPlanned.total).toBeGreaterThan(500);
    expect(midStreamPlanned.ended / midStreamPlanned.total, JSON.stringify(midStreamPlanned)).toBeGreaterThan(0.95);
    expect(gw.output()).not.toContain('gateway handler crashed');
    expect(gw.process.exitCode).toBeNull();

    // GC really ran before the figures were taken.
    expect(after.get('nodejs_gc_before_scrape')).toBe(1);
    // Handles: back to the baseline within a small constant; no timer or socket growth.
    const rb = resources(base);
    const ra = resources(after);
    expect(after.get('nodejs_active_handles')!).toBeLessThanOrEqual(base.get('nodejs_active_handles')! + 4);
    expect(ra.Timeout ?? 0).toBeLessThanOrEqual((rb.Timeout ?? 0) + 2);
    expect(ra.TCPSocketWrap ?? 0).toBeLessThanOrEqual((rb.TCPSocketWrap ?? 0) + 2);
    // Upstream sockets: bounded by the keep-alive pool during the load (one per upstream call in
    // flight: up to C, plus aborted streams still drained for their usage and sockets whose close is
    // not yet noticed; 66-70 measured on a quiet machine, 152 once with both cores saturated by
    // builds beside it; a leak would reach the thousands), all closed once idle.
    expect(main.peakSockets).toBeLessThanOrEqual(5 * C);
    expect(sumOf(after, 'gateway_upstream_sockets')).toBeLessThanOrEqual(sumOf(base, 'gateway_upstream_sockets'));
    expect(after.get('http_server_connections')!).toBeLessThanOrEqual(base.get('http_server_connections')! + 1);
    // Memory.
    expect(after.get('nodejs_heap_used_bytes')! - base.get('nodejs_heap_used_bytes')!).toBeLessThan(HEAP_GROWTH_MAX_MB * 2 ** 20);
    expect(after.get('process_resident_memory_bytes')! - base.get('process_resident_memory_bytes')!).toBeLessThan(RSS_GROWTH_MAX_MB * 2 ** 20);

    // Concurrency leases: every one released. (If a Redis call timed out under load, the limiter
    // answered in-process for a moment and a Redis lease may wait for its TTL: see reliability.test.ts.)
    const leases = await redis.zcard(`gw:{u:${acct.userId}}:conc`);
    if ((after.get('gateway_limiter_fallback_total') ?? 0) === 0) expect(leases).toBe(0);
    else console.warn(`limiter fell back to in-process during the run; ${leases} Redis leases left to expire by TTL`);

    // Every request has its log row; the aborted streams are logged client_closed; the balance moved
    // by exactly the sum of the logged costs, and each charge is one usage ledger entry.
    const total = WARM + N;
    await waitFor(async () => (await db.requestLog.count({ where: { userId: acct.userId } })) === total, 30_000);
    const byStatus = await db.requestLog.groupBy({ by: ['status', 'outcome'], where: { userId: acct.userId }, _count: { _all: true } });
    console.log(`  log rows: ${byStatus.map((g) => `${g.status}/${g.outcome} ${g._count._all}`).join(', ')}`);
    expect(byStatus.filter((g) => g.status === 500)).toEqual([]);
    const aborted = plan.filter((p) => p.kind === 'abort').length;
    const closed = byStatus.filter((g) => g.outcome === 'client_closed').reduce((s, g) => s + g._count._all, 0);
    expect(closed).toBe(aborted);
    const sum = await db.requestLog.aggregate({ where: { userId: acct.userId }, _sum: { costUsd: true } });
    const logged = pico(sum._sum.costUsd!.toFixed(12));
    expect(logged).toBeGreaterThan(0n);
    expect(pico(await balanceOf(acct.userId))).toBe(100n * PICO - logged);
    const charged = await db.requestLog.count({ where: { userId: acct.userId, costUsd: { gt: 0 } } });
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(charged);
  }, 300_000); // generous: 10,000 requests on a shared 2-core machine
});

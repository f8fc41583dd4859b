// Latency of one admit and one release with a realistic rule set, sequentially, against
// real Redis (plain and through the failover wrapper) and the in-process limiter.
// Usage: npx tsx bench/limiter-bench.ts [N]   (REDIS_URL, default redis://127.0.0.1:6379)
// Limits are set high enough that every admit passes: the full check+apply path is timed.

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { FailoverLimiter } from '../lib/limits/failover-limiter';
import { MemoryLimiter } from '../lib/limits/memory-limiter';
import { RedisLimiter } from '../lib/limits/redis-limiter';
import type { AdmitInput, Limiter, ReleaseInput, Rule } from '../lib/limits/types';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const N = Number(process.argv[2] ?? process.env.BENCH_N ?? 20_000);
const WARMUP = 500;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Workload {
  rules: Rule[];
  concurrencyKeys: string[];
  balanceKey: string;
  quotaKey: string;
}

function workload(prefix: string): Workload {
  const k = (name: string) => `${prefix}${name}`;
  const rules: Rule[] = [
    { kind: 'gcra', key: k('global:qps'), limit: 1_000_000, windowMs: 1_000, label: 'global' },
    { kind: 'window', key: k('tier:pro:rpm'), limit: 1_000_000, windowMs: MINUTE, label: 'tier rpm', requests: true },
    { kind: 'window', key: k('tier:pro:rph'), limit: 10_000_000, windowMs: HOUR, label: 'tier rph' },
    { kind: 'quota', key: k('tier:pro:tpd'), limit: 1e12, windowMs: DAY, label: 'tier tokens/day' },
    { kind: 'concurrency', key: k('tier:pro:conc'), limit: 100, label: 'tier concurrency' },
    { kind: 'window', key: k('model:gpt:rpm'), limit: 1_000_000, windowMs: MINUTE, label: 'model rpm' },
    { kind: 'concurrency', key: k('model:gpt:conc'), limit: 100, label: 'model concurrency' },
  ];
  return {
    rules,
    concurrencyKeys: [k('tier:pro:conc'), k('model:gpt:conc')],
    balanceKey: k('balance:acct'),
    quotaKey: k('tier:pro:tpd'),
  };
}

interface Stats {
  p50: number;
  p99: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((s, v) => s + v, 0) / sorted.length };
}

async function run(limiter: Limiter, w: Workload, iterations: number): Promise<{ admit: number[]; release: number[] }> {
  if (!(await limiter.admit({ rules: [], leaseId: 'probe', leaseTtlMs: 1, reserve: { key: w.balanceKey, amount: 0n } })).ok) {
    await limiter.initBalance(w.balanceKey, 10n ** 18n);
  }
  const admitMs: number[] = [];
  const releaseMs: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const admitInput: AdmitInput = {
      rules: w.rules,
      leaseId: randomUUID(),
      leaseTtlMs: 120_000,
      reserve: { key: w.balanceKey, amount: 50_000n },
    };
    let start = performance.now();
    const result = await limiter.admit(admitInput);
    admitMs.push(performance.now() - start);
    if (!result.ok) throw new Error(`admit refused at iteration ${i}: ${result.reason}`);

    const releaseInput: ReleaseInput = {
      leaseId: admitInput.leaseId,
      concurrencyKeys: w.concurrencyKeys,
      settle: { key: w.balanceKey, delta: 20_000n },
      usage: [{ key: w.quotaKey, windowMs: DAY, amount: 750 }],
    };
    start = performance.now();
    await limiter.release(releaseInput);
    releaseMs.push(performance.now() - start);
  }
  return { admit: admitMs, release: releaseMs };
}

/** CPU seconds the Redis server has used (INFO cpu: main thread and children, user + system). */
async function redisCpuSeconds(): Promise<number> {
  const client = new Redis(REDIS_URL);
  try {
    const info = await client.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
    return field('used_cpu_user') + field('used_cpu_sys');
  } finally {
    client.disconnect();
  }
}

async function bench(name: string, limiter: Limiter): Promise<void> {
  const prefix = `bench:limiter:${randomUUID()}:`;
  await run(limiter, workload(`${prefix}warmup:`), WARMUP);
  const cpu0 = name === 'memory' ? 0 : await redisCpuSeconds();
  const started = performance.now();
  const { admit, release } = await run(limiter, workload(prefix), N);
  const seconds = (performance.now() - started) / 1000;
  if (name !== 'memory') {
    const us = (((await redisCpuSeconds()) - cpu0) * 1e6) / N;
    console.log(`${name.padEnd(18)} Redis server CPU per admit+release pair: ${us.toFixed(1)} µs (sequential, so mostly per-call overhead)`);
  }
  for (const [op, samples] of [
    ['admit', admit],
    ['release', release],
  ] as const) {
    const s = stats(samples);
    console.log(`${name.padEnd(18)} ${op.padEnd(8)} p50 ${s.p50.toFixed(3)} ms  p99 ${s.p99.toFixed(3)} ms  mean ${s.mean.toFixed(3)} ms`);
  }
  console.log(`${name.padEnd(18)} ${N} admit+release pairs in ${seconds.toFixed(2)} s (${Math.round(N / seconds)} pairs/s)`);
}

/** 50 workers at once through the failover limiter (auto-pipelined, as in the gateway at c=50). */
async function benchConcurrent(limiter: Limiter, workers = 50): Promise<void> {
  const prefix = `bench:limiter:${randomUUID()}:`;
  const w = workload(prefix);
  const per = Math.ceil(N / workers);
  await limiter.initBalance(w.balanceKey, 10n ** 18n);
  const cpu0 = await redisCpuSeconds();
  const started = performance.now();
  await Promise.all(Array.from({ length: workers }, () => run(limiter, w, per)));
  const seconds = (performance.now() - started) / 1000;
  const pairs = per * workers;
  const us = (((await redisCpuSeconds()) - cpu0) * 1e6) / pairs;
  console.log(
    `failover, ${workers} concurrent: ${pairs} pairs in ${seconds.toFixed(2)} s (${Math.round(pairs / seconds)} pairs/s), Redis server CPU ${us.toFixed(1)} µs per pair`,
  );
}

async function deleteKeys(pattern: string): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

async function main(): Promise<void> {
  console.log(`limiter bench: ${N} sequential admit+release, 7 rules + balance reservation, redis ${REDIS_URL}`);
  const redis = new RedisLimiter(REDIS_URL);
  const failover = FailoverLimiter.fromUrl(REDIS_URL);
  const memory = new MemoryLimiter();
  try {
    await bench('redis', redis);
    await bench('failover(redis)', failover);
    await benchConcurrent(failover);
    if (failover.usingFallback) console.log(`note: failover used the fallback ${failover.fallbackCount} times`);
    await bench('memory', memory);
  } finally {
    await Promise.all([redis.close(), failover.close(), memory.close()]);
    await deleteKeys('bench:limiter:*');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

// Instructions Redis spends per admit+release pair in the limiter's scripts, counted by valgrind's
// callgrind (the same count run after run, whatever else the machine is doing; timings on these
// VMs move by half between runs). Starts its own redis-server under callgrind on a spare port, so
// the local Redis is not touched.
// Usage: npm run bench:redis-script [-- --rounds N]   (needs valgrind and redis-server on PATH)

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisLimiter } from '../lib/limits/redis-limiter';
import type { Rule } from '../lib/limits/types';
import { freePort, reachable } from './proc.mjs';

const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '50' } } });
const ROUNDS = Number(opt.rounds);
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

for (const tool of ['valgrind', 'callgrind_control', 'redis-server']) {
  if (spawnSync('which', [tool]).status !== 0) {
    console.error(`${tool} not found: this benchmark needs valgrind and redis-server (Debian: apt-get install -y valgrind redis-server)`);
    process.exit(2);
  }
}

/** An account's rules, as lib/gateway/admission/rules.ts builds them. */
type RuleSet = (account: string) => { rules: Rule[]; concurrencyKeys: string[]; quotaKey?: string };

// The benchmark's enterprise account (npm run bench): global QPS (GCRA), rpm and rph far above
// 10,000 (sub-bucket windows, as every window rule), concurrency.
const enterprise: RuleSet = (u) => ({
  rules: [
    { kind: 'gcra', key: 'gw:global', limit: 1_000_000, windowMs: 1000, label: 'global' },
    { kind: 'window', key: `gw:{u:${u}}:rpm`, limit: 10_000_000, windowMs: MINUTE, label: 'rpm', requests: true },
    { kind: 'window', key: `gw:{u:${u}}:rph`, limit: 100_000_000, windowMs: HOUR, label: 'rph' },
    { kind: 'concurrency', key: `gw:{u:${u}}:conc`, limit: 10_000, label: 'concurrency' },
  ],
  concurrencyKeys: [`gw:{u:${u}}:conc`],
});

// A free-tier account on a capped model: sliding windows, the token quota, two concurrency sets
// (limits raised so that nothing refuses: every call takes the full check-and-apply path).
const free: RuleSet = (u) => ({
  rules: [
    { kind: 'gcra', key: 'gw:global', limit: 1_000_000, windowMs: 1000, label: 'global' },
    { kind: 'window', key: `gw:{u:${u}}:rpm`, limit: 10_000, windowMs: MINUTE, label: 'rpm', requests: true },
    { kind: 'window', key: `gw:{u:${u}}:rph`, limit: 10_000, windowMs: HOUR, label: 'rph' },
    { kind: 'concurrency', key: `gw:{u:${u}}:conc`, limit: 100, label: 'concurrency' },
    { kind: 'quota', key: `gw:{u:${u}}:tpd`, limit: 1e12, windowMs: DAY, label: 'tokens per day' },
    { kind: 'window', key: 'gw:{m:model-1}:rpm', limit: 10_000, windowMs: MINUTE, label: 'model rpm' },
    { kind: 'concurrency', key: 'gw:{m:model-1}:conc', limit: 1_000, label: 'model concurrency' },
  ],
  concurrencyKeys: [`gw:{u:${u}}:conc`, 'gw:{m:model-1}:conc'],
  quotaKey: `gw:{u:${u}}:tpd`,
});

interface Scenario {
  name: string;
  ruleSet: RuleSet;
  /** Admits (then releases) issued together: one batch script call, as at c=50; 1 = single scripts. */
  batch: number;
  /** Distinct accounts among them (they share only the global layer and the model's keys). */
  accounts: number;
}

const scenarios: Scenario[] = [
  { name: "benchmark's rules, one account, batches of 8", ruleSet: enterprise, batch: 8, accounts: 1 },
  { name: "benchmark's rules, 8 accounts, batches of 8", ruleSet: enterprise, batch: 8, accounts: 8 },
  { name: 'free-tier rules, 8 accounts, batches of 8', ruleSet: free, batch: 8, accounts: 8 },
  { name: "benchmark's rules, one at a time", ruleSet: enterprise, batch: 1, accounts: 1 },
  { name: 'free-tier rules, one at a time', ruleSet: free, batch: 1, accounts: 1 },
];

/** The total instruction count of the newest callgrind dump in dir. */
function lastDumpTotal(dir: string): number {
  // cg.<pid>.<n>: the n-th dump (cg.<pid> itself is written at exit).
  const dumps = readdirSync(dir)
    .filter((f) => /^cg\.\d+\.\d+$/.test(f))
    .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]));
  const text = readFileSync(path.join(dir, dumps[dumps.length - 1]), 'utf8');
  const m = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in the callgrind dump ${dumps.join(', ')} (${text.length} bytes)`);
  return Number(m[1]);
}

const dir = mkdtempSync(path.join(tmpdir(), 'limiter-callgrind-'));
const port = await freePort();
const redis = spawn(
  'valgrind',
  ['--tool=callgrind', `--callgrind-out-file=${dir}/cg.%p`, 'redis-server', '--port', String(port), '--save', '', '--appendonly', 'no'],
  { stdio: 'ignore' },
);
const exited = new Promise<void>((resolve) => redis.once('exit', () => resolve()));
// SIGTERM lets valgrind remove its vgdb pipes from /tmp (SIGKILL, only if the script dies, leaves them).
const killRedis = () => {
  if (redis.exitCode === null && redis.signalCode === null) redis.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', killRedis);
async function stopRedis(): Promise<void> {
  redis.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  killRedis();
}

/** Waits until redis-server (slow to start under valgrind) accepts connections. */
async function listening(): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await reachable(`redis://127.0.0.1:${port}`)) return;
    await sleep(200);
  }
  throw new Error('redis-server under valgrind did not start within 30 s');
}

await listening();
const limiter = new RedisLimiter(`redis://127.0.0.1:${port}`);
try {
  const control = (flag: string) => {
    const r = spawnSync('callgrind_control', [flag, String(redis.pid)]);
    if (r.status !== 0) throw new Error(`callgrind_control ${flag} failed: ${r.stderr}`);
  };

  console.log(
    `Redis ${(await limiter.client.info('server')).match(/redis_version:(\S+)/)?.[1]} under callgrind; ${ROUNDS} rounds per scenario after 20 to warm up\n`,
  );
  console.log(`${'scenario'.padEnd(48)}  instructions per admit+release pair`);
  let seq = 0;
  for (const s of scenarios) {
    await limiter.client.flushall();
    await limiter.client.script('FLUSH');
    const accounts = Array.from({ length: s.accounts }, (_, j) => `acct${String(j).padStart(21, '0')}`);
    for (const a of accounts) await limiter.initBalance(`gw:{u:${a}}:bal`, 10n ** 17n);
    const sets = accounts.map((a) => s.ruleSet(a));
    const round = async () => {
      const items = Array.from({ length: s.batch }, (_, j) => ({
        a: accounts[j % accounts.length],
        set: sets[j % sets.length],
        leaseId: `req_0123456789abcdef${(seq++).toString(36).padStart(8, '0')}`,
      }));
      const results = await Promise.all(
        items.map((it) =>
          limiter.admit({
            rules: it.set.rules,
            leaseId: it.leaseId,
            leaseTtlMs: 60_000,
            reserve: { key: `gw:{u:${it.a}}:bal`, amount: 1_000_000_000n },
            denyKeys: [`gw:deny:u:${it.a}`, `gw:deny:k:${it.a}`],
          }),
        ),
      );
      if (!results.every((r) => r.ok)) throw new Error(`an admission was refused: ${JSON.stringify(results.find((r) => !r.ok))}`);
      await Promise.all(
        items.map((it) =>
          limiter.release({
            leaseId: it.leaseId,
            concurrencyKeys: it.set.concurrencyKeys,
            settle: { key: `gw:{u:${it.a}}:bal`, delta: 500_000_000n },
            usage: it.set.quotaKey ? [{ key: it.set.quotaKey, windowMs: DAY, amount: 700 }] : undefined,
          }),
        ),
      );
    };
    for (let i = 0; i < 20; i++) await round();
    control('-z');
    for (let i = 0; i < ROUNDS; i++) await round();
    control('-d');
    await sleep(200);
    const perPair = lastDumpTotal(dir) / (ROUNDS * s.batch);
    console.log(`${s.name.padEnd(48)}  ${Math.round(perPair).toLocaleString('en-US')}`);
  }
} finally {
  await limiter.close();
  await stopRedis();
}

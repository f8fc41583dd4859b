// SIGTERM while PostgreSQL is unreachable (issue 37 item 14): the request-log rows the database
// cannot take are spooled to DATA_DIR and written at the next start, once. A private PostgreSQL
// cluster (tests/support/pg-cluster.ts) is killed after the key is cached; requests are served from
// Redis balances; the gateway is stopped; the cluster comes back; the next start replays the spool.
// Asserted: the shutdown is bounded and says what it did (exit 75, an error line naming the file);
// afterwards exactly one log row per request, one usage ledger entry per charge summing to the
// costs the clients were told, and the database balance equal to the live (Redis) one; a spool
// replayed a second time changes nothing.

import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { waitFor } from '../support/accounts';
import { newPgCluster, pgClusterSkip, type Cluster } from '../support/pg-cluster';
import { PICO, pico } from '../support/money';
import { balanceKey } from '@/lib/limits/keys';

const run = promisify(execFile);
const N = 30;
const METRICS_TOKEN = 'pg-spool-metrics';
const skip = pgClusterSkip;
if (skip) console.warn(`pg-shutdown-spool.test.ts skipped: ${skip}`);

let cluster: Cluster;
let fake: FakeUpstream;
let redis: Redis;
let dataDir: string;
let config: Record<string, unknown>;
const gateways: RunningGateway[] = [];

const sql = (text: string, values?: unknown[]) => cluster.query(text, values);

async function start(): Promise<RunningGateway> {
  const gw = await startGateway({ config, env: { DATABASE_URL: cluster.url, DATA_DIR: dataDir, METRICS_TOKEN, SHUTDOWN_GRACE_MS: '1000' } });
  gateways.push(gw);
  return gw;
}

const spoolFiles = () => {
  const dir = path.join(dataDir, 'log-spool');
  return existsSync(dir) ? readdirSync(dir).map((f) => path.join(dir, f)) : [];
};

beforeAll(async () => {
  if (skip) return;
  cluster = await newPgCluster(await freePort());
  await cluster.init();
  fake = await startFakeUpstream({ record: false });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-spool-'));
  const cfg = testConfig({ openaiUrls: [fake.url], channelPrefix: 'spool-' }) as Record<string, any>;
  cfg.tiers.enterprise = { rpm: 1_000_000, rph: 10_000_000, concurrency: 256 };
  config = cfg;
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
}, 120_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
  await fake?.close();
  redis?.disconnect();
  await cluster?.destroy();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(skip)('SIGTERM while PostgreSQL is unreachable', () => {
  it('spools the unwritten rows and the next start writes them once: rows, ledger and both balances agree', { timeout: 180_000 }, async () => {
    const gw1 = await start();
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/admin.ts',
        'create-user',
        '--email',
        `spool-${Date.now()}@example.com`,
        '--password',
        'sturdy-pass-42',
        '--tier',
        'enterprise',
        '--balance-usd',
        '5',
      ],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: cluster.url, LOG_LEVEL: 'warn' }, timeout: 60_000 },
    );
    const account = JSON.parse(stdout.trim().split('\n').at(-1)!) as { userId: string; apiKey: string };
    const send = async (i: number) => {
      const res = await fetch(`${gw1.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `request ${i}` }] }),
      });
      await res.arrayBuffer();
      return { status: res.status, id: res.headers.get('x-request-id')!, cost: pico(res.headers.get('x-service-cost-usd') ?? 'NaN') };
    };
    // The key cached and its first row written while the database is up.
    const first = await send(-1);
    expect(first.status).toBe(200);
    await waitFor(async () => (await sql('SELECT 1 FROM "RequestLog" WHERE id = $1', [first.id])).rowCount === 1, 10_000);

    await cluster.kill();
    const served: { status: number; id: string; cost: bigint }[] = [];
    for (let i = 0; i < N; i += 5) served.push(...(await Promise.all([0, 1, 2, 3, 4].map((k) => send(i + k)))));
    expect(served.map((s) => s.status)).toEqual(Array(N).fill(200));
    const told = served.reduce((sum, s) => sum + s.cost, first.cost);
    expect(told).toBeGreaterThan(first.cost);

    const stopping = Date.now();
    const code = await gw1.stop('SIGTERM');
    const took = Date.now() - stopping;
    expect(code).toBe(75);
    // Grace (1 s here) + the bounded final flush; the harness would SIGKILL at 15 s.
    expect(took).toBeLessThan(12_000);
    expect(gw1.output()).toContain('spooled, written at the next start');
    const spooled = spoolFiles();
    expect(spooled).toHaveLength(1);
    expect(readFileSync(spooled[0], 'utf8').trim().split('\n')).toHaveLength(N);
    const copy = path.join(dataDir, 'spool-copy.jsonl');
    copyFileSync(spooled[0], copy);

    await cluster.start();
    const gw2 = await start(); // replays before it listens
    expect(spoolFiles()).toEqual([]);
    expect(gw2.output()).toContain('spooled request log rows written');

    const check = async () => {
      const rows = (await sql('SELECT id, "costUsd"::text AS cost FROM "RequestLog" WHERE "userId" = $1', [account.userId])).rows as {
        id: string;
        cost: string;
      }[];
      expect(rows.map((r) => r.id).sort()).toEqual([first.id, ...served.map((s) => s.id)].sort());
      const ledger = (await sql(`SELECT reference, "amountUsd"::text AS amount FROM "LedgerEntry" WHERE "userId" = $1 AND kind = 'usage'`, [account.userId]))
        .rows as { reference: string; amount: string }[];
      expect(ledger.map((l) => l.reference).sort()).toEqual(rows.map((r) => r.id).sort());
      expect(ledger.reduce((sum, l) => sum - pico(l.amount), 0n)).toBe(told);
      const db = pico(((await sql('SELECT "balanceUsd"::text AS b FROM "User" WHERE id = $1', [account.userId])).rows[0] as { b: string }).b);
      expect(db).toBe(5n * PICO - told);
      expect(BigInt((await redis.get(balanceKey(account.userId)))!)).toBe(db);
    };
    await check();

    // The same spool again (a file replayed twice): nothing is logged or charged twice.
    expect(await gw2.stop('SIGTERM')).toBe(0);
    copyFileSync(copy, path.join(dataDir, 'log-spool', 'spool-again.jsonl'));
    rmSync(copy);
    const gw3 = await start();
    expect(spoolFiles()).toEqual([]);
    await check();
    await gw3.stop('SIGTERM');
  });
});

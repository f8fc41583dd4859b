// The dashboard's reads against a large request log: generates ROWS request-log rows (default 10
// million) and their daily rollups in a private database on the configured PostgreSQL, spread over
// 60 days and 1,000 accounts, one of which (the heavy account) makes a tenth of all requests, then
// times the real query functions for the heavy account: the dashboard overview (getOverview), the
// usage API (usageReport by day, model and key, and usageByKey, as GET /api/usage) and log pages
// with filters (as GET /api/logs: parseLogFilters + listLogs). Prints the median and p95 of each and checks the
// targets (overview and usage < 50 ms, a log page < 100 ms). The database is dropped at the end.
// Usage: npm run bench:logs [-- --rows 200000] [--runs 15]   (DATABASE_URL: the server to use)
// To time again after a query change without generating again: --keep leaves the database, and
// --reuse <name> (with the same --rows) times on it and drops it after.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const ROWS = arg('rows', 10_000_000);
const RUNS = arg('runs', 15);
const DAYS = 60;
const ACCOUNTS = 1000;
const CHUNK = 250_000;
const DAY_MS = 86_400_000;

const KEEP = process.argv.includes('--keep');
const reuseAt = process.argv.indexOf('--reuse');
const REUSE = reuseAt >= 0 ? process.argv[reuseAt + 1] : undefined;
if (REUSE !== undefined && !/^bench_logs_\w+$/.test(REUSE)) throw new Error('--reuse takes a database this benchmark made (bench_logs_...)');

const base = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres');
const dbName = REUSE ?? `bench_logs_${process.pid}_${randomBytes(2).toString('hex')}`;
const url = new URL(base);
url.pathname = `/${dbName}`;

async function admin(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: base.toString() });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

// Deterministic ids: account n (1 = the heavy one) and its keys.
const accountId = (n: string) => `('00000000-0000-4000-8000-' || lpad((${n})::text, 12, '0'))::uuid`;
const keyId = (n: string, k: string) => `('00000000-0000-4000-9000-' || lpad(((${n}) * 10 + (${k}))::text, 12, '0'))::uuid`;
const HEAVY = '00000000-0000-4000-8000-000000000001';
const HEAVY_KEY_2 = '00000000-0000-4000-9000-000000000012';

const MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4', 'deepseek-chat', 'gemini-2.5-flash', 'gpt-4.1-nano'];

/** Rows [from, to): time-ordered over the 60 days; account, key, model and outcome spread by hashes of the row number. */
function chunkSql(from: number, to: number, startMs: number, spanMs: number): string {
  // PostgreSQL's own hash of the row number, and of the number shifted, for key and model: each
  // attribute independent of the others (one hash's residues would tie them together).
  const h = `abs(hashint8(g::bigint))`;
  const account = `(CASE WHEN g % 10 = 0 THEN 1 ELSE 2 + abs(hashint8(-g::bigint)) % ${ACCOUNTS - 1} END)`;
  return `INSERT INTO "RequestLog" ("id","createdAt","userId","apiKeyId","endpoint","modelRequested","modelServed","channel","status","outcome","stream",
            "promptTokens","completionTokens","costUsd","costCny","cnyRate","latencyMs","firstTokenMs")
    SELECT 'req_' || lpad(g::text, 12, '0'),
           to_timestamp((${startMs} + (g::float8 / ${ROWS}) * ${spanMs}) / 1000.0) AT TIME ZONE 'UTC',
           ${accountId('a')},
           CASE WHEN hk % 20 = 0 THEN NULL ELSE ${keyId('a', `1 + (hk / 20) % (CASE WHEN a = 1 THEN 5 ELSE 3 END)`)} END,
           'chat', m, CASE WHEN o = 2 THEN NULL ELSE m END, 'ch-' || (h % 4),
           CASE o WHEN 0 THEN 200 WHEN 1 THEN 429 ELSE 502 END,
           CASE o WHEN 0 THEN 'ok' WHEN 1 THEN 'rate_limited' ELSE 'upstream_error' END,
           h % 3 = 0,
           CASE WHEN o = 0 THEN 100 + h % 900 ELSE 0 END, CASE WHEN o = 0 THEN 50 + h % 400 ELSE 0 END,
           CASE WHEN o = 0 THEN (150 + h % 1300) * 0.000001 ELSE 0 END, CASE WHEN o = 0 THEN (150 + h % 1300) * 0.0000072 ELSE 0 END,
           7.2, 200 + h % 3000, CASE WHEN h % 3 = 0 THEN 100 + h % 500 END
    FROM (
      SELECT g, h, a, abs(hashint8(g::bigint + 2000000000000)) AS hk,
             (ARRAY[${MODELS.map((m) => `'${m}'`).join(',')}])[1 + abs(hashint8(g::bigint + 1000000000000)) % ${MODELS.length}] AS m,
             CASE WHEN h % 100 < 95 THEN 0 WHEN h % 100 < 98 THEN 1 ELSE 2 END AS o
      FROM (SELECT g, ${h} AS h, ${account} AS a FROM generate_series(${from}, ${to - 1}) AS g) s
    ) r`;
}

function stats(ms: number[]): { median: number; p95: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
  return { median: at(0.5), p95: at(0.95) };
}

async function time(fn: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < 2; i++) await fn(); // warm: plans, connections, caches
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return stats(ms);
}

if (!REUSE) await admin(`CREATE DATABASE "${dbName}"`);
process.env.DATABASE_URL = url.toString();
let failed = false;
const now = new Date();
const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
try {
  if (!REUSE) await generate();
  await timeQueries();
} finally {
  if (KEEP) console.log(`kept ${dbName} (time again with --reuse ${dbName})`);
  else {
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    console.log(`dropped ${dbName}`);
  }
}
process.exit(failed ? 1 : 0);

async function generate(): Promise<void> {
  // Loaded now: lib/env reads DATABASE_URL when first imported.
  const { postgresSql, runMigrations } = await import('@/lib/db/migrate');
  const { maintainRequestLogPartitions } = await import('@/lib/db/partitions');
  const sql = await postgresSql(url.toString());
  await runMigrations(undefined, sql);
  const startMs = today - (DAYS - 1) * DAY_MS;
  const spanMs = now.getTime() - startMs;
  await maintainRequestLogPartitions(sql, { now: new Date(startMs), daysAhead: DAYS + 7, retentionDays: 0 });

  console.log(`database ${dbName}: ${ROWS.toLocaleString('en')} rows over ${DAYS} days, ${ACCOUNTS} accounts (one with a tenth of the rows)`);
  const t0 = performance.now();
  await sql.exec(`SET synchronous_commit = off`);
  await sql.exec(`INSERT INTO "User" (id, email, "passwordHash", tier, "balanceUsd", "updatedAt")
    SELECT ${accountId('n')}, 'bench-' || n || '@example.com', 'x', 'pro', 1000, now() FROM generate_series(1, ${ACCOUNTS}) n`);
  await sql.exec(`INSERT INTO "ApiKey" (id, "userId", name, hash, prefix, "lastFour")
    SELECT ${keyId('n', 'k')}, ${accountId('n')}, 'key ' || k, md5(n || '-' || k), 'sk-', lpad(k::text, 4, '0')
    FROM generate_series(1, ${ACCOUNTS}) n, generate_series(1, 5) k WHERE k <= 3 OR n = 1`);
  for (let from = 1; from <= ROWS; from += CHUNK) {
    await sql.exec(chunkSql(from, Math.min(ROWS + 1, from + CHUNK), startMs, spanMs));
    process.stdout.write(`\r  generated ${Math.min(ROWS, from + CHUNK - 1).toLocaleString('en')} rows (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  await sql.exec(`INSERT INTO "UsageDaily" ("userId","day","model","apiKeyId","requests","failed","promptTokens","completionTokens","costUsd","costCny")
    SELECT "userId", "createdAt"::date, COALESCE("modelServed", "modelRequested", ''), COALESCE("apiKeyId", '00000000-0000-0000-0000-000000000000'), count(*),
           count(*) FILTER (WHERE "outcome" NOT IN ('ok', 'client_closed')), sum("promptTokens"), sum("completionTokens"), sum("costUsd"), sum("costCny")
    FROM "RequestLog" GROUP BY 1, 2, 3, 4`);
  await sql.exec(`VACUUM ANALYZE`);
  const [{ heavy, rollups, size }] = await sql.query<{ heavy: string; rollups: string; size: string }>(
    `SELECT (SELECT count(*) FROM "RequestLog" WHERE "userId" = '${HEAVY}')::text AS heavy, (SELECT count(*) FROM "UsageDaily")::text AS rollups,
            pg_size_pretty(pg_database_size(current_database())) AS size`,
  );
  console.log(
    `\n  done in ${((performance.now() - t0) / 1000).toFixed(0)} s: heavy account ${Number(heavy).toLocaleString('en')} rows, ${rollups} rollup rows, database ${size}`,
  );
  await sql.close();
}

async function timeQueries(): Promise<void> {
  const { getOverview } = await import('@/lib/dashboard/overview');
  const { parseUsageQuery, usageReport } = await import('@/lib/dashboard/usage');
  const { decodeCursor, parseLogFilters } = await import('@/lib/dashboard/filters');
  const { getLog, listLogs } = await import('@/lib/dashboard/queries');
  const { usageByKey } = await import('@/lib/keys/queries');
  const { getDb } = await import('@/lib/db');

  const day = (offset: number) => new Date(today - offset * DAY_MS).toISOString().slice(0, 10);
  const usage = (q: string) => () => usageReport(HEAVY, parseUsageQuery(new URLSearchParams(q)));
  // As GET /api/logs: 50 rows a page; `page` 2 starts after the first page's cursor (found once).
  const logPage = async (q: string, page: 1 | 2 = 1) => {
    const filters = parseLogFilters(new URLSearchParams(q));
    const first = page === 2 ? await listLogs(HEAVY, filters, { limit: 50 }) : undefined;
    const startingAfter = first?.nextCursor ? decodeCursor(first.nextCursor) : undefined;
    if (page === 2 && !startingAfter) return null; // too few rows (a small --rows)
    return () => listLogs(HEAVY, filters, { limit: 50, startingAfter });
  };
  const lastId = `req_${String(ROWS - (ROWS % 10)).padStart(12, '0')}`; // a heavy-account row (row numbers divisible by 10)
  const combined = `model=gpt-4o&status=5xx&key=${HEAVY_KEY_2}&from=${day(30)}&to=${day(0)}`;
  const checks: { name: string; target: number; fn: (() => Promise<unknown>) | null }[] = [
    { name: 'overview (getOverview)', target: 50, fn: () => getOverview(HEAVY) },
    { name: 'usage, default 30 days by day', target: 50, fn: usage('') },
    { name: 'usage, 60 days by model', target: 50, fn: usage(`from=${day(59)}&group_by=model`) },
    {
      // As the route answers group_by=key: the report, then each key's spend (by_key).
      name: 'usage, 60 days by key + by_key',
      target: 50,
      fn: async () => {
        await usage(`from=${day(59)}&group_by=key`)();
        await usageByKey(HEAVY);
      },
    },
    { name: 'logs, no filter', target: 100, fn: await logPage('') },
    { name: 'logs, no filter, page 2', target: 100, fn: await logPage('', 2) },
    {
      name: 'logs, no filter, 45 days back',
      target: 100,
      fn: () => listLogs(HEAVY, {}, { limit: 50, startingAfter: { createdAt: new Date(today - 45 * DAY_MS), id: 'req_' } }),
    },
    { name: 'logs, model', target: 100, fn: await logPage('model=claude-sonnet-4') },
    { name: 'logs, status failed', target: 100, fn: await logPage('status=failed') },
    { name: 'logs, key', target: 100, fn: await logPage(`key=${HEAVY_KEY_2}`) },
    { name: 'logs, 7-day range', target: 100, fn: await logPage(`from=${day(20)}&to=${day(13)}`) },
    { name: 'logs, model+status+key+range', target: 100, fn: await logPage(combined) },
    { name: 'logs, same filters, page 2', target: 100, fn: await logPage(combined, 2) },
    { name: 'log detail by id (getLog)', target: 100, fn: () => getLog(HEAVY, lastId) },
  ];
  console.log(`\n${'query'.padEnd(34)} ${'median'.padStart(9)} ${'p95'.padStart(9)}  target`);
  for (const c of checks) {
    if (!c.fn) {
      console.log(`${c.name.padEnd(34)} (no such page with this many rows)`);
      continue;
    }
    const r = await time(c.fn);
    const ok = r.p95 < c.target;
    if (!ok) failed = true;
    console.log(`${c.name.padEnd(34)} ${r.median.toFixed(1).padStart(6)} ms ${r.p95.toFixed(1).padStart(6)} ms  < ${c.target} ms ${ok ? 'met' : 'MISSED'}`);
  }
  await (await getDb()).$disconnect();
}

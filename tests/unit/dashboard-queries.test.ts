import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { formatPico, usdToPico } from '@/lib/billing/money';
import { loadConfigFile } from '@/lib/config';
import { csvCell, csvRow } from '@/lib/dashboard/csv';
import { breakdownCsvHeader } from '@/lib/dashboard/log-csv';
import { decodeCursor, parseLogFilters } from '@/lib/dashboard/filters';
import {
  dailyUsage,
  decodeLedgerCursor,
  getLog,
  ledgerHistory,
  listLogs,
  logCsvLines,
  LOG_SCAN_BUDGET,
  requireLog,
  usageTotals,
  type LogEntry,
  type LogPage,
} from '@/lib/dashboard/queries';
import { effectiveLimits, nextTier } from '@/lib/dashboard/overview';

// Runs against the real PostgreSQL of the test run. Each run makes its own two accounts and removes them.

const NOW = new Date('2026-03-15T12:00:00.000Z');
const at = (iso: string) => new Date(iso);
const runId = randomUUID().slice(0, 8);

let userA = '';
let userB = '';
let keyA1 = '';
let keyA2 = '';

interface LogSeed {
  id: string;
  userId: string;
  createdAt: Date;
  apiKeyId?: string;
  model?: string;
  served?: string;
  status?: number;
  outcome?: string;
  costUsd?: string;
  costCny?: string;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string;
  routeReason?: string;
}

function logRow(s: LogSeed): Prisma.RequestLogCreateManyInput {
  return {
    id: s.id,
    userId: s.userId,
    createdAt: s.createdAt,
    apiKeyId: s.apiKeyId ?? null,
    endpoint: '/v1/chat/completions',
    modelRequested: s.model ?? 'gpt-4o-mini',
    modelServed: s.served ?? s.model ?? 'gpt-4o-mini',
    channel: 'openai-main',
    status: s.status ?? 200,
    outcome: s.outcome ?? 'ok',
    promptTokens: s.promptTokens ?? 10,
    completionTokens: s.completionTokens ?? 5,
    costUsd: new Prisma.Decimal(s.costUsd ?? '0'),
    costCny: new Prisma.Decimal(s.costCny ?? '0'),
    cnyRate: new Prisma.Decimal('7.2'),
    latencyMs: 120,
    errorCode: s.errorCode ?? null,
    routeReason: s.routeReason ?? null,
  };
}

const ids = (rows: LogEntry[]) => rows.map((r) => r.id);
const rid = (n: string) => `req_${runId}_${n}`;

beforeAll(async () => {
  const db = await getDb();
  const a = await db.user.create({ data: { email: `dash-a-${runId}@example.test`, passwordHash: 'x' } });
  const b = await db.user.create({ data: { email: `dash-b-${runId}@example.test`, passwordHash: 'x' } });
  userA = a.id;
  userB = b.id;
  keyA1 = (await db.apiKey.create({ data: { userId: userA, name: 'ci', hash: `h1-${runId}`, prefix: 'sk-gw-aaaa', lastFour: '1111' } })).id;
  keyA2 = (await db.apiKey.create({ data: { userId: userA, name: 'prod, "main"', hash: `h2-${runId}`, prefix: 'sk-gw-bbbb', lastFour: '2222' } })).id;

  await db.requestLog.createMany({
    data: [
      // Two days ago: three requests whose costs only sum exactly in decimal arithmetic.
      logRow({ id: rid('01'), userId: userA, createdAt: at('2026-03-13T01:00:00.000Z'), apiKeyId: keyA1, costUsd: '0.1', costCny: '0.72' }),
      logRow({ id: rid('02'), userId: userA, createdAt: at('2026-03-13T12:00:00.000Z'), apiKeyId: keyA1, costUsd: '0.2', costCny: '1.44' }),
      logRow({
        id: rid('03'),
        userId: userA,
        createdAt: at('2026-03-13T23:59:59.999Z'),
        apiKeyId: keyA2,
        costUsd: '0.000000000001',
        costCny: '0.000000000007',
      }),
      // Yesterday: a fallback and a failure.
      logRow({
        id: rid('04'),
        userId: userA,
        createdAt: at('2026-03-14T08:00:00.000Z'),
        apiKeyId: keyA2,
        model: 'gpt-4o',
        served: 'gpt-4o-mini',
        costUsd: '0.000123456789',
        costCny: '0.000888888881',
        routeReason: 'fallback: gpt-4o failed',
      }),
      logRow({
        id: rid('05'),
        userId: userA,
        createdAt: at('2026-03-14T09:00:00.000Z'),
        apiKeyId: keyA1,
        model: 'claude-sonnet-4-5',
        status: 502,
        outcome: 'error',
        errorCode: 'all_channels_failed',
        promptTokens: 0,
        completionTokens: 0,
      }),
      // Today: same timestamp twice (ties are broken by id), a client that went away, a 429.
      logRow({ id: rid('06'), userId: userA, createdAt: at('2026-03-15T10:00:00.000Z'), apiKeyId: keyA1, costUsd: '1.5', costCny: '10.8' }),
      logRow({ id: rid('07'), userId: userA, createdAt: at('2026-03-15T10:00:00.000Z'), apiKeyId: keyA1, costUsd: '0.25', costCny: '1.8' }),
      logRow({ id: rid('08'), userId: userA, createdAt: at('2026-03-15T11:00:00.000Z'), apiKeyId: keyA2, status: 499, outcome: 'client_closed' }),
      logRow({
        id: rid('09'),
        userId: userA,
        createdAt: at('2026-03-15T11:30:00.000Z'),
        apiKeyId: keyA1,
        status: 429,
        outcome: 'error',
        errorCode: 'rate_limit_exceeded',
        model: 'gpt-4o',
      }),
      // Last month: outside this month's totals.
      logRow({ id: rid('10'), userId: userA, createdAt: at('2026-02-27T10:00:00.000Z'), apiKeyId: keyA1, costUsd: '3', costCny: '21.6' }),
      // User B, on the same days: must never show up for A.
      logRow({ id: rid('b1'), userId: userB, createdAt: at('2026-03-15T10:30:00.000Z'), costUsd: '9', costCny: '64.8' }),
      logRow({ id: rid('b2'), userId: userB, createdAt: at('2026-03-13T10:30:00.000Z'), costUsd: '9', costCny: '64.8', model: 'gpt-4o' }),
    ],
  });

  const entry = (userId: string, kind: 'recharge' | 'usage' | 'admin_credit' | 'refund', iso: string, amount: string, after: string) => ({
    userId,
    kind,
    createdAt: at(iso),
    amountUsd: new Prisma.Decimal(amount),
    balanceAfterUsd: new Prisma.Decimal(after),
  });
  await db.ledgerEntry.createMany({
    data: [
      entry(userA, 'admin_credit', '2026-03-12T09:00:00.000Z', '1', '1'),
      entry(userA, 'recharge', '2026-03-13T00:30:00.000Z', '20', '21'),
      entry(userA, 'usage', '2026-03-13T01:00:00.000Z', '-0.1', '20.9'),
      entry(userA, 'usage', '2026-03-13T12:00:00.000Z', '-0.2', '20.7'),
      entry(userA, 'usage', '2026-03-13T23:59:59.999Z', '-0.000000000001', '20.699999999999'),
      entry(userA, 'refund', '2026-03-14T10:00:00.000Z', '0.5', '21.199999999999'),
      entry(userA, 'usage', '2026-03-15T10:00:00.000Z', '-1.5', '19.699999999999'),
      entry(userB, 'recharge', '2026-03-13T00:00:00.000Z', '100', '100'),
      entry(userB, 'usage', '2026-03-13T10:30:00.000Z', '-9', '91'),
    ],
  });
});

afterAll(async () => {
  const db = await getDb();
  await db.requestLog.deleteMany({ where: { userId: { in: [userA, userB].filter(Boolean) } } });
  await db.user.deleteMany({ where: { id: { in: [userA, userB].filter(Boolean) } } });
});

const all = { limit: 100 };
const filters = (query: string) => parseLogFilters(new URLSearchParams(query));

describe('request log list', () => {
  it('lists only the caller’s requests, newest first, ties broken by id', async () => {
    const page = await listLogs(userA, {}, all);
    expect(ids(page.data)).toEqual([rid('09'), rid('08'), rid('07'), rid('06'), rid('05'), rid('04'), rid('03'), rid('02'), rid('01'), rid('10')]);
    expect(page.nextCursor).toBeNull();
    expect(page.prevCursor).toBeNull();
  });

  it('pages through the log without gaps or repeats, and back again', async () => {
    const first = await listLogs(userA, {}, { limit: 4 });
    expect(ids(first.data)).toEqual([rid('09'), rid('08'), rid('07'), rid('06')]);
    expect(first.nextCursor).not.toBeNull();
    expect(first.prevCursor).toBeNull();

    const second = await listLogs(userA, {}, { limit: 4, startingAfter: decodeCursor(first.nextCursor!) });
    expect(ids(second.data)).toEqual([rid('05'), rid('04'), rid('03'), rid('02')]);

    const third = await listLogs(userA, {}, { limit: 4, startingAfter: decodeCursor(second.nextCursor!) });
    expect(ids(third.data)).toEqual([rid('01'), rid('10')]);
    expect(third.nextCursor).toBeNull();

    const back = await listLogs(userA, {}, { limit: 4, endingBefore: decodeCursor(second.prevCursor!) });
    expect(ids(back.data)).toEqual(ids(first.data));
    expect(back.prevCursor).toBeNull();
  });

  it('filters by key', async () => {
    const page = await listLogs(userA, filters(`key=${keyA2}`), all);
    expect(ids(page.data)).toEqual([rid('08'), rid('04'), rid('03')]);
  });

  it('filters by model, matching the requested or the served model', async () => {
    expect(ids((await listLogs(userA, filters('model=gpt-4o'), all)).data)).toEqual([rid('09'), rid('04')]);
    expect(ids((await listLogs(userA, filters('model=claude-sonnet-4-5'), all)).data)).toEqual([rid('05')]);
  });

  it('filters by outcome, by any failure, by HTTP status and by status class', async () => {
    expect(ids((await listLogs(userA, filters('status=client_closed'), all)).data)).toEqual([rid('08')]);
    expect(ids((await listLogs(userA, filters('status=error'), all)).data)).toEqual([rid('09'), rid('05')]);
    expect(ids((await listLogs(userA, filters('status=429'), all)).data)).toEqual([rid('09')]);
    expect(ids((await listLogs(userA, filters('status=5xx'), all)).data)).toEqual([rid('05')]);
    expect((await listLogs(userA, filters('status=ok'), all)).data).toHaveLength(7);
  });

  it('filters by a date range whose upper day is inclusive', async () => {
    const page = await listLogs(userA, filters('from=2026-03-13&to=2026-03-14'), all);
    expect(ids(page.data)).toEqual([rid('05'), rid('04'), rid('03'), rid('02'), rid('01')]);
  });

  it('combines filters', async () => {
    const page = await listLogs(userA, filters(`key=${keyA1}&status=ok&from=2026-03-14`), all);
    expect(ids(page.data)).toEqual([rid('07'), rid('06')]);
  });

  it('rejects malformed filters with a 400', () => {
    expect(() => filters('key=not-a-uuid')).toThrow(/key/);
    expect(() => filters('from=yesterday')).toThrow(/from/);
    expect(() => filters('status=%3Cscript%3E')).toThrow(/status/);
    expect(() => filters('from=2026-03-15&to=2026-03-14')).toThrow(/before/);
  });
});

describe('request log detail', () => {
  it('returns the caller’s own request with every field and exact money', async () => {
    const log = await getLog(userA, rid('04'));
    expect(log).not.toBeNull();
    expect(log!.modelRequested).toBe('gpt-4o');
    expect(log!.modelServed).toBe('gpt-4o-mini');
    expect(log!.routeReason).toBe('fallback: gpt-4o failed');
    expect(formatPico(log!.costUsd)).toBe('0.000123456789');
    expect(formatPico(log!.costCny)).toBe('0.000888888881');
    expect(log!.cnyRate).toBe('7.2');
  });

  it('returns null for another account’s request, so the API answers 404', async () => {
    expect(await getLog(userA, rid('b1'))).toBeNull();
    expect(await getLog(userB, rid('01'))).toBeNull();
    expect(await getLog(userA, 'req_does_not_exist')).toBeNull();
    await expect(requireLog(userA, rid('b1'))).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('CSV export', () => {
  it('quotes cells holding commas, quotes or newlines, doubling inner quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvRow(['x', 1, true, undefined])).toBe('x,1,true,\r\n');
  });

  it('defuses text that a spreadsheet would run as a formula, but not negative numbers', () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell('-0.5')).toBe('-0.5');
  });

  it('exports the filtered rows with exact costs and escaped key names', async () => {
    let text = '';
    for await (const chunk of logCsvLines(userA, filters(`key=${keyA2}`))) text += chunk;
    const lines = text.trimEnd().split('\r\n');
    expect(lines[0].startsWith('id,created_at,endpoint,api_key_id,api_key_name,')).toBe(true);
    // Header, three rows, and the totals of those three last.
    expect(lines).toHaveLength(5);
    expect(lines[4].startsWith('total,3 requests,')).toBe(true);
    expect(lines[1].startsWith(`${rid('08')},2026-03-15T11:00:00.000Z,`)).toBe(true);
    expect(lines[2]).toContain(',"prod, ""main""",gpt-4o,gpt-4o-mini,');
    expect(lines[2]).toContain(',0.000123456789,0.000888888881,7.2,');
    // A row logged without a price breakdown leaves the breakdown's columns (after route_reason and billed_to) empty,
    // and one without a member or project the four columns after them (member_id, member, project_id, project).
    expect(lines[2].endsWith(`,fallback: gpt-4o failed,balance${','.repeat(breakdownCsvHeader.length + 4)}`)).toBe(true);
    expect(text).not.toContain(rid('b1'));
  });

  it('reads in batches and stops at the row cap', async () => {
    let rows = 0;
    for await (const chunk of logCsvLines(userA, {}, 3)) rows += chunk.split('\r\n').length - 1;
    expect(rows).toBe(1 + 3 + 1); // header, the capped rows, totals
  });
});

describe('a filtered log page reads a bounded number of rows', () => {
  // More requests than one page examines (LOG_SCAN_BUDGET), of which only the three oldest match:
  // each page stops its search after the budget, possibly empty, and its cursor goes on, so the
  // pages together answer every match once, in order, and the export finds them all.
  let userC = '';
  beforeAll(async () => {
    const db = await getDb();
    userC = (await db.user.create({ data: { email: `dash-c-${runId}@example.test`, passwordHash: 'x' } })).id;
    const total = LOG_SCAN_BUDGET * 2 + 500;
    await db.requestLog.createMany({
      data: Array.from({ length: total }, (_, i) =>
        logRow({
          id: rid(`c${String(i).padStart(5, '0')}`),
          userId: userC,
          createdAt: new Date(Date.UTC(2026, 2, 1) + i * 1000),
          model: i < 3 ? 'rare-model' : 'gpt-4o-mini',
        }),
      ),
    });
  });
  afterAll(async () => {
    const db = await getDb();
    await db.requestLog.deleteMany({ where: { userId: userC } });
    await db.user.deleteMany({ where: { id: userC } });
  });

  it('pages forward through partial pages to every match, then back', async () => {
    const f = filters('model=rare-model');
    const pages: LogPage[] = [];
    let cursor: string | null = null;
    do {
      const page: LogPage = await listLogs(userC, f, { limit: 2, startingAfter: cursor ? decodeCursor(cursor) : undefined });
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);
    expect(pages.map((p) => ids(p.data))).toEqual([[], [], [rid('c00002'), rid('c00001')], [rid('c00000')]]);
    expect(pages[3].nextCursor).toBeNull();
    // Back from the last page: the newer pages again, as far as the search reaches each time.
    const back = await listLogs(userC, f, { limit: 2, endingBefore: decodeCursor(pages[3].prevCursor!) });
    expect(ids(back.data)).toEqual([rid('c00002'), rid('c00001')]);
    let exported = '';
    for await (const chunk of logCsvLines(userC, f)) exported += chunk;
    expect(exported.trim().split('\r\n')).toHaveLength(1 + 3 + 1);
  });

  it('an unfiltered page reads only what it returns, whatever the budget', async () => {
    const page = await listLogs(userC, {}, { limit: 3 });
    expect(ids(page.data)).toEqual([rid('c04499'), rid('c04498'), rid('c04497')]);
  });
});

describe('usage aggregation', () => {
  it('sums each UTC day exactly and zero-fills days without requests', async () => {
    const days = await dailyUsage(userA, 30, NOW);
    expect(days).toHaveLength(30);
    expect(days[29].date).toBe('2026-03-15');
    expect(days[0].date).toBe('2026-02-14');
    const byDate = new Map(days.map((d) => [d.date, d]));

    const d13 = byDate.get('2026-03-13')!;
    expect(formatPico(d13.spendUsd)).toBe('0.300000000001');
    expect(formatPico(d13.spendCny)).toBe('2.160000000007');
    expect(d13.requests).toBe(3);
    expect(d13.promptTokens).toBe(30);
    expect(d13.completionTokens).toBe(15);

    const d14 = byDate.get('2026-03-14')!;
    expect(formatPico(d14.spendUsd)).toBe('0.000123456789');
    expect(d14.requests).toBe(2);
    expect(d14.failed).toBe(1);

    const d15 = byDate.get('2026-03-15')!;
    expect(formatPico(d15.spendUsd)).toBe('1.75');
    expect(d15.requests).toBe(4);
    expect(d15.failed).toBe(1);

    expect(byDate.get('2026-02-27')!.spendUsd).toBe(3_000_000_000_000n);
    expect(byDate.get('2026-03-01')).toEqual({ date: '2026-03-01', requests: 0, failed: 0, spendUsd: 0n, spendCny: 0n, promptTokens: 0, completionTokens: 0 });
    const total = days.reduce((sum, d) => sum + d.spendUsd, 0n);
    expect(formatPico(total)).toBe('5.05012345679');
  });

  it('totals a range of the caller’s requests only', async () => {
    const month = await usageTotals(userA, at('2026-03-01T00:00:00.000Z'), at('2026-03-16T00:00:00.000Z'));
    expect(formatPico(month.spendUsd)).toBe('2.05012345679');
    expect(month.requests).toBe(9);
    const empty = await usageTotals(userA, at('2025-01-01T00:00:00.000Z'), at('2025-02-01T00:00:00.000Z'));
    expect(empty).toEqual({ requests: 0, failed: 0, spendUsd: 0n, spendCny: 0n, promptTokens: 0, completionTokens: 0 });
  });
});

describe('ledger history', () => {
  it('lists credits one by one and usage as one exact total per day, newest first', async () => {
    const page = await ledgerHistory(userA, { limit: 50 });
    expect(page.data.map((i) => `${i.kind}:${formatPico(i.amountUsd)}`)).toEqual([
      'usage:-1.5',
      'refund:0.5',
      'usage:-0.300000000001',
      'recharge:20',
      'admin_credit:1',
    ]);
    const day13 = page.data[2];
    expect(day13.day).toBe('2026-03-13');
    expect(day13.entries).toBe(3);
    expect(formatPico(day13.balanceAfterUsd)).toBe('20.699999999999');
    expect(page.nextCursor).toBeNull();
  });

  it('pages with a cursor and never shows another account’s entries', async () => {
    const first = await ledgerHistory(userA, { limit: 2 });
    expect(first.data.map((i) => i.kind)).toEqual(['usage', 'refund']);
    const second = await ledgerHistory(userA, { limit: 10, before: decodeLedgerCursor(first.nextCursor!) });
    expect(second.data.map((i) => i.kind)).toEqual(['usage', 'recharge', 'admin_credit']);
    const b = await ledgerHistory(userB, { limit: 50 });
    expect(b.data.map((i) => `${i.kind}:${formatPico(i.amountUsd)}`)).toEqual(['usage:-9', 'recharge:100']);
  });
});

describe('tier progress', () => {
  const config = loadConfigFile('config/gateway.example.yaml');

  it('tells a free account how much more spend this month reaches pro', () => {
    expect(nextTier(config, 'free', usdToPico('12.5'))).toEqual({ name: 'pro', promoteAtUsd: usdToPico('50'), remainingUsd: usdToPico('37.5') });
    expect(nextTier(config, 'free', usdToPico('60'))?.remainingUsd).toBe(0n);
  });

  it('says enterprise is by contact and that nothing is above it', () => {
    expect(nextTier(config, 'vip', 0n)).toEqual({ name: 'enterprise', promoteAtUsd: null, remainingUsd: null });
    expect(nextTier(config, 'enterprise', 0n)).toBeNull();
  });

  it('applies an account’s own limits over its tier’s', () => {
    expect(effectiveLimits(config, 'free', null)).toEqual({ rpm: 60, rph: 600, tokensPerDay: 100000, concurrency: 2 });
    expect(effectiveLimits(config, 'vip', { rpm: 2500, concurrency: 48 })).toEqual({ rpm: 2500, rph: 100000, tokensPerDay: null, concurrency: 48 });
    expect(effectiveLimits(config, 'free', { tokensPerDay: null })).toMatchObject({ tokensPerDay: null });
  });
});

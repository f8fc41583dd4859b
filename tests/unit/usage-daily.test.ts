// The daily rollup (UsageDaily: account x model x UTC day) is maintained by the batch writer in the
// statement that inserts the request-log rows: it always equals the log's own totals, and a batch
// replayed after an ambiguous failure (the same row ids) counts once.

import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { closeLogWriter, enqueueLog, flushLogs, type LogRecord } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';
import { createAccount } from '../support/accounts';
import { dailyUsage, dailyUsageFromRollup, usageTotals, usageTotalsByDay } from '@/lib/dashboard/queries';

afterAll(async () => {
  await closeLogWriter();
  await (await getDb()).$disconnect();
});

function record(userId: string, over: Partial<LogRecord>): LogRecord {
  return {
    id: `req_${randomUUID().replace(/-/g, '')}`,
    createdAt: new Date('2026-11-20T10:00:00Z'),
    userId,
    apiKeyId: null,
    endpoint: 'chat',
    modelRequested: 'gpt-4o-mini',
    modelServed: 'gpt-4o-mini',
    channel: 'openai-1',
    attempts: [],
    status: 200,
    outcome: 'ok',
    stream: false,
    promptTokens: 10,
    completionTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    tokensEstimated: false,
    costPico: 1_000_000n,
    costCnyPico: 7_200_000n,
    cnyRate: '7.2',
    latencyMs: 5,
    firstTokenMs: null,
    errorCode: null,
    routeReason: null,
    ...over,
  };
}

describe('UsageDaily rollup', () => {
  it('equals the request log per account, model and day; a replayed row counts once', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    const rows = [
      record(u, {}),
      record(u, { promptTokens: 5, completionTokens: 1, costPico: 3n }),
      record(u, { modelServed: 'deepseek-chat', modelRequested: 'deepseek-chat' }),
      record(u, { createdAt: new Date('2026-11-21T23:59:59Z') }),
      record(u, { status: 429, outcome: 'rate_limited', promptTokens: 0, completionTokens: 0, costPico: 0n, modelServed: null }),
    ];
    for (const r of rows) enqueueLog(r);
    await flushLogs();
    // The same row again (a batch retried after an ambiguous failure): nothing more counted.
    enqueueLog(rows[0]);
    await flushLogs();
    const db = await getDb();
    const rollup = await db.usageDaily.findMany({ where: { userId: u }, orderBy: [{ day: 'asc' }, { model: 'asc' }] });
    expect(
      rollup.map((r) => [
        r.day.toISOString().slice(0, 10),
        r.model,
        Number(r.requests),
        Number(r.promptTokens),
        Number(r.completionTokens),
        r.costUsd.toFixed(12),
      ]),
    ).toEqual([
      ['2026-11-20', 'deepseek-chat', 1, 10, 20, '0.000001000000'],
      ['2026-11-20', 'gpt-4o-mini', 3, 15, 21, '0.000001000003'],
      ['2026-11-21', 'gpt-4o-mini', 1, 10, 20, '0.000001000000'],
    ]);
    const log = await db.requestLog.aggregate({ where: { userId: u }, _count: true, _sum: { costUsd: true } });
    expect(log._count).toBe(5);
    expect(rollup.reduce((n, r) => n + Number(r.requests), 0)).toBe(5);
    expect(rollup.reduce((n, r) => n + Number(r.failed), 0)).toBe(1);
    // The dashboard's rollup readers answer exactly as the raw-row ones.
    const now = new Date('2026-11-22T08:00:00Z');
    expect(await dailyUsageFromRollup(u, 30, now)).toEqual(await dailyUsage(u, 30, now));
    const from = new Date('2026-11-01T00:00:00Z');
    const to = new Date('2026-11-23T00:00:00Z');
    expect(await usageTotalsByDay(u, from, to)).toEqual(await usageTotals(u, from, to));
    expect((await usageTotalsByDay(u, from, to)).requests).toBe(5);
  });

  it('a batch replayed through the writer into today’s day partition leaves one row and one rollup count', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    const now = new Date();
    const rows = [record(u, { createdAt: now }), record(u, { createdAt: now, costPico: 2_000_000n })];
    for (const r of rows) enqueueLog(r);
    await flushLogs();
    for (const r of rows) enqueueLog(r);
    await flushLogs();
    const db = await getDb();
    const found = await db.$queryRaw<{ id: string; p: string }[]>`
      SELECT id, tableoid::regclass::text AS p FROM "RequestLog" WHERE "userId" = ${u}::uuid ORDER BY id`;
    const day = now.toISOString().slice(0, 10).replace(/-/g, '');
    expect(found).toEqual(
      rows
        .map((r) => r.id)
        .sort()
        .map((id) => ({ id, p: `"RequestLog_p${day}"` })),
    );
    const rollup = await db.usageDaily.findMany({ where: { userId: u } });
    expect(rollup.map((r) => Number(r.requests))).toEqual([2]);
    expect(await db.ledgerEntry.count({ where: { userId: u, kind: 'usage' } })).toBe(2);
  });
});

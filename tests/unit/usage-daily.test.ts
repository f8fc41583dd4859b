// The daily rollup (UsageDaily: account x model x UTC day) is maintained by the batch writer in the
// statement that inserts the request-log rows: it always equals the log's own totals, and a batch
// replayed after an ambiguous failure (the same row ids) counts once.

import { afterAll, describe, expect, it } from 'vitest';
import { closeLogWriter, enqueueLog, flushLogs } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';
import { createAccount } from '../support/accounts';
import { logRecord } from '../support/log-record';
import { dailyUsage, dailyUsageFromRollup, listKeyNames, usageTotals, usageTotalsByDay } from '@/lib/dashboard/queries';
import { reportZone, usageReport } from '@/lib/dashboard/usage';
import { firstRunState } from '@/lib/dashboard/first-run';
import { loadKeySpend, usageByKey } from '@/lib/keys/queries';

afterAll(async () => {
  await closeLogWriter();
  await (await getDb()).$disconnect();
});

async function keyDisplay(keyId: string): Promise<string> {
  const db = await getDb();
  const key = await db.apiKey.findUniqueOrThrow({ where: { id: keyId } });
  return (await listKeyNames(key.userId)).find((k) => k.id === keyId)!.display;
}

const record = logRecord;

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

  it('counts the viewer’s days when asked for a zone (from the log), and UTC days otherwise (from the rollup)', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    // 10:00 UTC is 18:00 in Shanghai the same day; 23:30 UTC is 07:30 the next day there.
    enqueueLog(record(u, { createdAt: new Date('2026-11-21T10:00:00Z'), costPico: 7n }));
    enqueueLog(record(u, { createdAt: new Date('2026-11-21T23:30:00Z'), costPico: 11n }));
    await flushLogs();
    const days = (r: Awaited<ReturnType<typeof usageReport>>) => r.days.map((d) => [d.date, d.requests, d.spendUsd]);
    const utc = await usageReport(u, { from: '2026-11-21', to: '2026-11-22', groupBy: 'none' });
    expect(utc.zone).toBe('UTC');
    expect(days(utc)).toEqual([
      ['2026-11-21', 2, 18n],
      ['2026-11-22', 0, 0n],
    ]);
    const shanghai = await usageReport(u, { from: '2026-11-21', to: '2026-11-22', groupBy: 'model', tz: 'Asia/Shanghai' });
    expect(shanghai.zone).toBe('Asia/Shanghai');
    expect(days(shanghai)).toEqual([
      ['2026-11-21', 1, 7n],
      ['2026-11-22', 1, 11n],
    ]);
    expect(shanghai.totals).toEqual(utc.totals);
    // A range older than the log keeps (its retention) can only be counted by UTC day, and says so.
    expect(reportZone({ from: '2026-01-01', to: '2026-01-02', groupBy: 'none', tz: 'Asia/Shanghai' }, Date.parse('2026-11-28T00:00:00Z'), 35)).toBe('UTC');
    expect(reportZone({ from: '2026-11-01', to: '2026-11-02', groupBy: 'none', tz: 'Asia/Shanghai' }, Date.parse('2026-11-28T00:00:00Z'), 35)).toBe(
      'Asia/Shanghai',
    );
    expect(reportZone({ from: '2020-01-01', to: '2020-01-02', groupBy: 'none', tz: 'Asia/Shanghai' }, Date.parse('2026-11-28T00:00:00Z'), 0)).toBe(
      'Asia/Shanghai',
    );
  });

  it('the usage report (by day, model and key) reads the rollup and matches the log', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    const rows = [
      record(u, { apiKeyId: acct.keyId }),
      record(u, { apiKeyId: acct.keyId, modelServed: 'deepseek-chat', modelRequested: 'deepseek-chat', costPico: 5n }),
      record(u, { createdAt: new Date('2026-11-21T01:00:00Z'), status: 502, outcome: 'upstream_error', modelServed: null, costPico: 0n }),
    ];
    for (const r of rows) enqueueLog(r);
    await flushLogs();
    const brief = (g: { key: string; label: string; requests: number; failed: number; spendUsd: bigint }) => [g.key, g.label, g.requests, g.failed, g.spendUsd];
    const byKey = await usageReport(u, { from: '2026-11-20', to: '2026-11-21', groupBy: 'key' });
    expect(byKey.groups.map(brief)).toEqual([
      [acct.keyId, 'test (' + (await keyDisplay(acct.keyId)) + ')', 2, 0, 1_000_005n],
      ['(none)', 'No key', 1, 1, 0n],
    ]);
    const byModel = await usageReport(u, { from: '2026-11-20', to: '2026-11-21', groupBy: 'model' });
    expect(byModel.groups.map(brief)).toEqual([
      ['gpt-4o-mini', 'gpt-4o-mini', 2, 1, 1_000_000n],
      ['deepseek-chat', 'deepseek-chat', 1, 0, 5n],
    ]);
    const all = await usageReport(u, { from: '2026-11-20', to: '2026-11-21', groupBy: 'none' });
    expect(all.days.map((d) => [d.date, d.requests, d.failed, d.spendUsd])).toEqual([
      ['2026-11-20', 2, 0, 1_000_005n],
      ['2026-11-21', 1, 1, 0n],
    ]);
    expect(all.totals).toEqual(await usageTotals(u, new Date('2026-11-20T00:00:00Z'), new Date('2026-11-22T00:00:00Z')));
  });

  it('a key’s spend (its budgets, the keys page) is read from the rollup: lifetime and this month, exact', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    const now = new Date();
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const rows = [
      record(u, { apiKeyId: acct.keyId, createdAt: new Date(monthStart - 1), costPico: 7n }), // last month's last millisecond
      record(u, { apiKeyId: acct.keyId, createdAt: new Date(monthStart), costPico: 11n }),
      record(u, { apiKeyId: acct.keyId, createdAt: now, costPico: 13n }),
      record(u, { apiKeyId: null, createdAt: now, costPico: 1000n }), // no key: nobody's key spend
    ];
    for (const r of rows) enqueueLog(r);
    await flushLogs();
    expect(await loadKeySpend(u, acct.keyId)).toBe(31n);
    expect(await loadKeySpend(u, acct.keyId, monthStart)).toBe(24n);
    const [key] = await usageByKey(u);
    expect([key.key_id, key.total_usd, key.month_usd]).toEqual([acct.keyId, '0.000000000031', '0.000000000024']);
  });

  it('the first-run checklist remembers a successful call after its log rows are gone (retention)', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const u = acct.userId;
    enqueueLog(record(u, { outcome: 'upstream_error', status: 502, costPico: 0n }));
    await flushLogs();
    expect((await firstRunState(u, 1n)).hasCall).toBe(false); // only a failure so far
    enqueueLog(record(u, {}));
    await flushLogs();
    expect((await firstRunState(u, 1n)).hasCall).toBe(true);
    const db = await getDb();
    await db.requestLog.deleteMany({ where: { userId: u } }); // as a dropped day partition would
    expect((await firstRunState(u, 1n)).hasCall).toBe(true);
  });
});

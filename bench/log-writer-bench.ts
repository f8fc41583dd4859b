// CPU cost of the request-log write-behind (lib/billing/writer.ts), which runs in the gateway
// process: per logged request by batch size (the per-batch transaction overhead shows at small
// sizes), the longest event-loop stall it causes, and for scale the same rows through Prisma's
// createMany versus one raw INSERT … SELECT FROM unnest.
// Usage: node --import tsx bench/log-writer-bench.ts [records per batch size, default 2000]
// (DATABASE_URL as for the gateway; the account it creates is deleted at the end.)
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createUser } from '@/lib/accounts/queries';
import { enqueueLog, flushLogs } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { record } from './log-record';

const N = Number(process.argv[2] ?? 2000);
const BATCHES = [1, 10, 50, 200, 1000];
const SPLIT_BATCH = 50;

const db = await getDb();
const user = await createUser({
  email: `bench-${randomBytes(6).toString('hex')}@example.com`,
  password: 'bench-writer-1',
  tier: 'enterprise',
  balancePico: 0n,
});
try {
  for (let i = 0; i < 50; i++) enqueueLog(record(user.id)); // warm-up
  await flushLogs();
  console.log(`enqueueLog + flushLogs (lib/billing/writer.ts), ${N} records per batch size`);
  console.log('batch size   µs CPU per logged request   ms wall per batch   longest event-loop stall ms');
  for (const b of BATCHES) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let batches = 0;
    for (let done = 0; done < N; done += b) {
      for (let i = 0; i < b; i++) enqueueLog(record(user.id));
      await flushLogs();
      batches++;
    }
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    h.disable();
    console.log(
      `${String(b).padStart(10)}   ${((cpu.user + cpu.system) / (batches * b)).toFixed(0).padStart(25)}   ${(wall / batches).toFixed(1).padStart(17)}   ${(h.max / 1e6).toFixed(1).padStart(27)}`,
    );
  }

  // Where it goes, statement by statement, at a typical batch size.
  const ROUNDS = 20;
  const B = SPLIT_BATCH;
  const row = () => {
    const { costPico, costCnyPico, ...rest } = record(user.id);
    void costPico;
    void costCnyPico;
    return {
      ...rest,
      attempts: rest.attempts as Prisma.InputJsonValue,
      priceBreakdown: (rest.priceBreakdown ?? undefined) as Prisma.InputJsonValue | undefined,
      costUsd: new Prisma.Decimal('0.000006'),
      costCny: new Prisma.Decimal('0.0000432'),
      cnyRate: new Prisma.Decimal('7.2'),
    };
  };
  const time = async (name: string, fn: () => Promise<unknown>) => {
    await fn();
    const c0 = process.cpuUsage();
    for (let i = 0; i < ROUNDS; i++) await fn();
    const c = process.cpuUsage(c0);
    console.log(`  ${name.padEnd(58)} ${((c.user + c.system) / ROUNDS / B).toFixed(0).padStart(6)} µs/row`);
  };
  console.log(`\nper statement, ${B} rows per call (CPU of this process per row):`);
  await time('Prisma requestLog.createMany', () => db.requestLog.createMany({ skipDuplicates: true, data: Array.from({ length: B }, row) }));
  await time('Prisma requestLog.createMany without the attempts JSON', () =>
    db.requestLog.createMany({ skipDuplicates: true, data: Array.from({ length: B }, () => ({ ...row(), attempts: undefined })) }),
  );
  await time('Prisma ledgerEntry.findMany (reference in …)', () =>
    db.ledgerEntry.findMany({
      where: { kind: 'usage', reference: { in: Array.from({ length: B }, () => randomBytes(8).toString('hex')) } },
      select: { reference: true },
    }),
  );
  await time('Prisma ledgerEntry.createMany', () =>
    db.ledgerEntry.createMany({
      data: Array.from({ length: B }, () => ({
        userId: user.id,
        kind: 'usage' as const,
        amountUsd: new Prisma.Decimal('-0.000006'),
        balanceAfterUsd: new Prisma.Decimal('10'),
        reference: randomBytes(8).toString('hex'),
        createdAt: new Date(),
      })),
    }),
  );
  await time('Prisma user.update (balance decrement, once per batch)', () =>
    db.user.update({ where: { id: user.id }, data: { balanceUsd: { decrement: new Prisma.Decimal('0.0003') } }, select: { balanceUsd: true } }),
  );
  const cols = [
    'id',
    'createdAt',
    'userId',
    'endpoint',
    'modelRequested',
    'modelServed',
    'channel',
    'attempts',
    'status',
    'outcome',
    'stream',
    'promptTokens',
    'completionTokens',
    'costUsd',
    'costCny',
    'cnyRate',
    'latencyMs',
    'firstTokenMs',
  ];
  const types = [
    'text',
    'timestamp',
    'uuid',
    'text',
    'text',
    'text',
    'text',
    'jsonb',
    'int',
    'text',
    'bool',
    'int',
    'int',
    'numeric',
    'numeric',
    'numeric',
    'int',
    'int',
  ];
  const sql = `INSERT INTO "RequestLog" (${cols.map((c) => `"${c}"`).join(', ')}) SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT (id) DO NOTHING`;
  await time('same rows, one raw INSERT … SELECT FROM unnest($1…$18)', () => {
    const rows = Array.from({ length: B }, () => record(user.id));
    return db.$executeRawUnsafe(
      sql,
      rows.map((r) => r.id),
      rows.map((r) => r.createdAt),
      rows.map((r) => r.userId),
      rows.map((r) => r.endpoint),
      rows.map((r) => r.modelRequested),
      rows.map((r) => r.modelServed),
      rows.map((r) => r.channel),
      rows.map((r) => JSON.stringify(r.attempts)),
      rows.map((r) => r.status),
      rows.map((r) => r.outcome),
      rows.map((r) => r.stream),
      rows.map((r) => r.promptTokens),
      rows.map((r) => r.completionTokens),
      rows.map(() => '0.000006'),
      rows.map(() => '0.0000432'),
      rows.map((r) => r.cnyRate),
      rows.map((r) => r.latencyMs),
      rows.map((r) => r.firstTokenMs),
    );
  });
} finally {
  await db.requestLog.deleteMany({ where: { userId: user.id } });
  await db.user.delete({ where: { id: user.id } });
}
process.exit(0);

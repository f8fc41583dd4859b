import { randomBytes } from 'node:crypto';
import { createUser } from '@/lib/accounts/queries';
import { getDb } from '@/lib/db';
import { Prisma } from '@/lib/generated/prisma/client';
const db = await getDb();
const user = await createUser({ email: `bench-${randomBytes(6).toString('hex')}@example.com`, password: 'bench-writer-1', tier: 'enterprise', balancePico: 0n });
const B = 50, ROUNDS = 20;
const row = () => ({ id: `req_${randomBytes(12).toString('hex')}`, createdAt: new Date(), userId: user.id, apiKeyId: null, endpoint: '/v1/chat/completions', modelRequested: 'gpt-4o-mini', modelServed: 'gpt-4o-mini', channel: 'openai-1', attempts: [{ channel: 'openai-1', ok: true, status: 200, ms: 1 }], status: 200, outcome: 'ok', stream: false, promptTokens: 12, completionTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, tokensEstimated: false, costUsd: new Prisma.Decimal('0.000006'), costCny: new Prisma.Decimal('0.0000432'), cnyRate: new Prisma.Decimal('7.2'), latencyMs: 1, firstTokenMs: 1, errorCode: null, routeReason: null });
async function t(name: string, fn: () => Promise<unknown>) {
  await fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) await fn();
  const c = process.cpuUsage(c0);
  console.log(name.padEnd(40), ((c.user + c.system) / ROUNDS / B).toFixed(0), 'µs/row');
}
await t('requestLog.createMany (50 rows)', () => db.requestLog.createMany({ skipDuplicates: true, data: Array.from({ length: B }, row) }));
await t('requestLog.createMany no attempts json', () => db.requestLog.createMany({ skipDuplicates: true, data: Array.from({ length: B }, () => ({ ...row(), attempts: undefined })) }));
await t('ledgerEntry.findMany (50 refs)', () => db.ledgerEntry.findMany({ where: { kind: 'usage', reference: { in: Array.from({ length: B }, () => randomBytes(8).toString('hex')) } }, select: { reference: true } }));
await t('ledgerEntry.createMany (50 rows)', () => db.ledgerEntry.createMany({ data: Array.from({ length: B }, () => ({ userId: user.id, kind: 'usage' as const, amountUsd: new Prisma.Decimal('-0.000006'), balanceAfterUsd: new Prisma.Decimal('10'), reference: randomBytes(8).toString('hex'), createdAt: new Date() })) }));
await t('user.update', () => db.user.update({ where: { id: user.id }, data: { balanceUsd: { decrement: new Prisma.Decimal('0.0003') } }, select: { balanceUsd: true } }));
await t('$executeRaw insert 50 rows (1 stmt)', () => db.$executeRawUnsafe(`INSERT INTO "RequestLog" (id, "userId", endpoint, status, outcome, "cnyRate", "latencyMs") SELECT x, $1::uuid, '/v1/chat/completions', 200, 'ok', 7.2, 1 FROM unnest($2::text[]) AS x`, user.id, Array.from({ length: B }, () => `req_${randomBytes(12).toString('hex')}`)));
await db.requestLog.deleteMany({ where: { userId: user.id } });
await db.user.delete({ where: { id: user.id } });
process.exit(0);

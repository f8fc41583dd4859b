// CPU cost of the request-log write-behind (lib/billing/writer.ts) per logged request, by batch
// size: the same enqueueLog/flushLogs calls the gateway makes, against the configured database.
// Usage: node --import tsx bench/log-writer-bench.ts [records per batch size, default 2000]
// (DATABASE_URL as for the gateway; the account it creates is deleted at the end.)
import { randomBytes } from 'node:crypto';
import { createUser } from '@/lib/accounts/queries';
import { enqueueLog, flushLogs, type LogRecord } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';

const N = Number(process.argv[2] ?? 2000);
const BATCHES = [1, 10, 50, 200, 1000];

function record(userId: string): LogRecord {
  return {
    id: `req_${randomBytes(12).toString('hex')}`,
    createdAt: new Date(),
    userId,
    apiKeyId: null,
    endpoint: '/v1/chat/completions',
    modelRequested: 'gpt-4o-mini',
    modelServed: 'gpt-4o-mini',
    channel: 'openai-1',
    attempts: [{ channel: 'openai-1', model: 'gpt-4o-mini', ok: true, status: 200, ms: 1 }],
    status: 200,
    outcome: 'ok',
    stream: false,
    promptTokens: 12,
    completionTokens: 7,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    tokensEstimated: false,
    costPico: 6_000_000n,
    costCnyPico: 43_200_000n,
    cnyRate: '7.2',
    latencyMs: 1,
    firstTokenMs: 1,
    errorCode: null,
    routeReason: null,
  };
}

const db = await getDb();
const user = await createUser({ email: `bench-${randomBytes(6).toString('hex')}@example.com`, password: 'bench-writer-1', tier: 'enterprise', balancePico: 0n });
try {
  // warm-up: compile the queries once
  for (let i = 0; i < 50; i++) enqueueLog(record(user.id));
  await flushLogs();
  console.log('batch size   µs CPU per logged request   ms wall per batch');
  for (const b of BATCHES) {
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
    console.log(`${String(b).padStart(10)}   ${((cpu.user + cpu.system) / (batches * b)).toFixed(0).padStart(25)}   ${(wall / batches).toFixed(1).padStart(17)}`);
  }
} finally {
  await db.requestLog.deleteMany({ where: { userId: user.id } });
  await db.user.delete({ where: { id: user.id } });
}
process.exit(0);

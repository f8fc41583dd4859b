// PostgreSQL's CPU per request-log row written by the write-behind queue (lib/billing/writer.ts) at a
// fixed request rate: what LOG_FLUSH_MS (and so the batch size) costs the database. Rows are
// enqueued at RATE per second for SECONDS, then drained; the CPU of each process of the local
// PostgreSQL server (per process, by its title; bench/proc.mjs) is read before and after.
// Usage: LOG_FLUSH_MS=200 node --import tsx bench/log-flush-bench.ts [rate, default 4000] [seconds, default 8]
// (DATABASE_URL as for the gateway; the account it creates and its rows are deleted at the end.)
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createUser } from '@/lib/accounts/queries';
import { enqueueLog, flushLogs } from '@/lib/billing/writer';
import { getDb } from '@/lib/db';
import { env } from '@/lib/env';
import { record } from './log-record';
import { processCpuMicros, processTree, serverPid } from './proc.mjs';

const RATE = Number(process.argv[2] ?? 4000);
const SECONDS = Number(process.argv[3] ?? 8);
/** CPU microseconds of each process of the local PostgreSQL server, by its title (backends by database and state). */
function postgresCpu(): Map<string, number> {
  const per = new Map<string, number>();
  const postmaster = serverPid('postgres');
  for (const pid of postmaster ? processTree(postmaster) : []) {
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .replace(/\0/g, ' ')
        .replace(/\d+\.\d+\.\d+\.\d+\(\d+\)/, 'client')
        .trim();
    } catch {
      continue; // the process ended meanwhile
    }
    per.set(title, (per.get(title) ?? 0) + processCpuMicros(pid));
  }
  return per;
}

const db = await getDb();
const user = await createUser({
  email: `bench-${randomBytes(6).toString('hex')}@example.com`,
  password: 'bench-writer-1',
  tier: 'enterprise',
  balancePico: 0n,
});
try {
  const before = postgresCpu();
  const t0 = Date.now();
  let n = 0;
  while (Date.now() - t0 < SECONDS * 1000) {
    const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
    while (n < due) {
      enqueueLog(record(user.id));
      n++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await flushLogs();
  const after = postgresCpu();
  let total = 0;
  const parts: string[] = [];
  for (const [title, micros] of after) {
    const used = (micros - (before.get(title) ?? 0)) / 1000;
    total += used;
    if (used > 0) parts.push(`${title}: ${used} ms`);
  }
  console.log(
    `LOG_FLUSH_MS=${env.LOG_FLUSH_MS}, ${RATE} rows/s for ${SECONDS} s (${n} rows, about ${Math.min(1000, Math.round((RATE * env.LOG_FLUSH_MS) / 1000))} per batch)`,
  );
  console.log(`  PostgreSQL CPU ${total} ms = ${((total * 1000) / n).toFixed(1)} µs per row  (${parts.join('; ')})`);
} finally {
  await db.ledgerEntry.deleteMany({ where: { userId: user.id } });
  await db.requestLog.deleteMany({ where: { userId: user.id } });
  await db.user.delete({ where: { id: user.id } });
}
process.exit(0);

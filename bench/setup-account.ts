// The benchmark's account, made through the same library calls the admin CLI uses.
//
//   node --import tsx bench/setup-account.ts                 → creates an enterprise account with a
//        $1,000,000 balance and limits high enough never to refuse (rpm 10M, rph 100M,
//        concurrency 10000), prints one JSON line {"userId": "...", "apiKey": "..."}
//   node --import tsx bench/setup-account.ts --cleanup <userId>
//        → deletes that account, its keys, ledger and request-log rows and its limiter keys in Redis
//
// Uses DATABASE_URL / REDIS_URL / GATEWAY_CONFIG like the gateway does.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createKey, createUser, setLimits } from '@/lib/accounts/queries';
import { creditBalance } from '@/lib/billing/ledger';
import { usdToPico } from '@/lib/money';
import { getDb } from '@/lib/db';

const BALANCE_USD = process.env.BENCH_BALANCE_USD ?? '1000000';
const LIMITS = { rpm: 10_000_000, rph: 100_000_000, concurrency: 10_000, tokensPerDay: null };

async function create(): Promise<void> {
  const email = `bench-${randomBytes(6).toString('hex')}@example.com`;
  const user = await createUser({ email, password: `Bench-${randomBytes(9).toString('base64url')}-9`, tier: 'enterprise', balancePico: 0n });
  await creditBalance(user.id, 'admin_credit', usdToPico(BALANCE_USD), { note: 'benchmark' });
  await setLimits(user.id, LIMITS);
  const key = await createKey(user.id, 'bench');
  process.stdout.write(`${JSON.stringify({ userId: user.id, apiKey: key.key, email })}\n`);
}

async function cleanup(userId: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(userId)) throw new Error(`not a user id: ${userId}`);
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { email: true } });
  if (!user) return;
  if (!user.email.startsWith('bench-')) throw new Error(`refusing to delete ${user.email}: not a benchmark account`);
  const logs = await db.requestLog.deleteMany({ where: { userId } });
  await db.user.delete({ where: { id: userId } }); // keys, ledger and payments cascade
  // Its limiter state (the rph window alone holds one member per request for an hour).
  let redisKeys = 0;
  if (process.env.REDIS_URL) {
    const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const keys = [`gw:bal:${userId}`];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `gw:u:${userId}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
      redisKeys = await redis.unlink(...keys);
    } finally {
      redis.disconnect();
    }
  }
  process.stdout.write(`${JSON.stringify({ deleted: userId, requestLogs: logs.count, redisKeys })}\n`);
}

try {
  const i = process.argv.indexOf('--cleanup');
  if (i !== -1) await cleanup(process.argv[i + 1] ?? '');
  else await create();
  process.exit(0);
} catch (err) {
  process.stderr.write(`setup-account: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

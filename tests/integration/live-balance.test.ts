// The live balance (Redis) converges to the database: a credit made by a process that cannot reach
// Redis (the credit outbox, lib/billing/ledger.ts), and the reservations of requests in flight on an
// instance that is SIGKILLed (reservation leases, lib/limits).
import { describe, it, expect, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startGateway, testConfig, freePort, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { getDb } from '@/lib/db';
import { usdToPico } from '@/lib/money';

const run = promisify(execFile);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = new Redis(REDIS_URL);
afterAll(() => redis.disconnect());

const chat = (gw: RunningGateway, apiKey: string, body: Record<string, unknown> = {}) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50, ...body }),
  });

async function dbBalancePico(userId: string): Promise<bigint> {
  const user = await (await getDb()).user.findUniqueOrThrow({ where: { id: userId } });
  return usdToPico(user.balanceUsd.toFixed(12));
}

describe('live balance', () => {
  it('a credit made while Redis is unreachable from the crediting process reaches the live balance within seconds', async () => {
    const fake = await startFakeUpstream();
    const gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }) });
    try {
      const account = await createAccount(); // $0
      const refused = await chat(gw, account.apiKey);
      expect(refused.status).toBe(402); // the live balance ($0) is loaded in Redis now

      // The admin CLI credits with Redis unreachable from it (nothing listens on that port).
      const deadRedis = `redis://127.0.0.1:${await freePort()}`;
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'credit', '--user', account.userId, '--usd', '1'], {
        cwd: ROOT,
        env: { ...process.env, REDIS_URL: deadRedis },
      });
      const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
      expect(out.balanceUsd).toBe('1.000000000000');
      expect(out.live).toBe('pending'); // not reported as spendable when it is not
      expect(stderr).toMatch(/Redis is unreachable from here; the credit is recorded/);

      // The running server applies it from the database (its reconciler): paid requests pass.
      const started = Date.now();
      await waitFor(async () => (await chat(gw, account.apiKey)).status === 200, 5_000);
      expect(Date.now() - started).toBeLessThan(5_000);
      // Exactly once: the live balance is the database's less what was spent since.
      await waitFor(async () => !(await (await getDb()).ledgerEntry.findFirst({ where: { userId: account.userId, livePending: true } })), 5_000);
      await new Promise((r) => setTimeout(r, 300)); // the log rows of the calls above are written
      expect(BigInt((await redis.get(`gw:{u:${account.userId}}:bal`))!)).toBe(await dbBalancePico(account.userId));
    } finally {
      await gw.stop();
      await fake.close();
    }
  }, 60_000);

  it('after a SIGKILL with streams in flight, their reservations return to the live balance: it converges to the database', async () => {
    // Streams that take ~10 s: still open when the instance is killed.
    const fake = await startFakeUpstream({ chunkDelayMs: 1_000 });
    const env = { GATEWAY_LEASE_TTL_MS: '1500' };
    let gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env });
    try {
      const account = await createAccount({ balanceUsd: '1' });
      const streams = await Promise.all(
        [1, 2].map(async () => {
          const res = await chat(gw, account.apiKey, { stream: true, max_tokens: 4000 });
          expect(res.status).toBe(200);
          const reader = res.body!.getReader();
          await reader.read(); // the first bytes: admitted, reservation taken
          return reader;
        }),
      );
      const held = BigInt((await redis.get(`gw:{u:${account.userId}}:bal`))!);
      const db = await dbBalancePico(account.userId);
      expect(held).toBeLessThan(db); // two reservations held (the free tier allows two at once)

      gw.process.kill('SIGKILL');
      await new Promise((r) => gw.process.once('exit', r));
      for (const reader of streams) await reader.cancel().catch(() => undefined);

      gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env });
      await new Promise((r) => setTimeout(r, 1_700)); // the dead instance's leases expire
      // The next admission of the account returns them; its own cost is settled and logged.
      const next = await chat(gw, account.apiKey);
      expect(next.status).toBe(200);
      await next.text();
      const cost = usdToPico(next.headers.get('x-service-cost-usd')!);
      await waitFor(async () => (await dbBalancePico(account.userId)) === db - cost, 5_000);
      expect(BigInt((await redis.get(`gw:{u:${account.userId}}:bal`))!)).toBe(db - cost);
    } finally {
      await gw.stop();
      await fake.close();
    }
  }, 90_000);
});

// A key's own, project and member budgets (docs/decisions/056) on a real Redis Cluster: they share
// the account's slot with its rate windows and balance, so one script call on two limiter instances
// reserves them all and admits exactly what the member's budget covers.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimiter } from '../../lib/limits/redis-limiter';
import { accountKey } from '../../lib/limits/keys';
import { keyBudgets } from '@/lib/keys/admission';
import { keyGuard } from '@/lib/keys/access';
import type { KeyControls } from '@/lib/keys/controls';
import type { Principal } from '@/lib/auth/principal';
import type { Rule } from '../../lib/limits/types';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster';

const PICO = 1_000_000_000_000n;
let cluster: TestCluster;
const clients: Cluster[] = [];
let a: RedisLimiter;
let b: RedisLimiter;

beforeAll(async () => {
  cluster = await startRedisCluster();
  const client = () => {
    const c = new Cluster(cluster.nodes, { redisOptions: { commandTimeout: 2_000 } });
    clients.push(c);
    return c;
  };
  a = new RedisLimiter(client());
  b = new RedisLimiter(client());
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await cluster?.stop();
});

describe('member and project budgets on Redis Cluster', () => {
  it('one slot with the account; exactly what the member budget covers is admitted across two instances', async () => {
    const userId = randomUUID();
    const controls: KeyControls = {
      budgetPico: 100n * PICO,
      monthlyBudgetPico: null,
      models: [],
      rpm: null,
      tpm: null,
      concurrency: null,
      allowedIps: [],
      expiresAt: null,
    };
    const guard = keyGuard('k', controls, 0, {
      project: { id: randomUUID(), name: 'P', models: null, monthlyBudgetPico: 10n * PICO, budgetVersion: 0 },
      member: { id: randomUUID(), name: 'm@example.com', monthlyBudgetPico: 3n * PICO, budgetVersion: 1 },
    });
    const principal: Principal = { keyId: randomUUID(), keyHash: 'h', userId, tier: 'pro', suspended: false, limits: null, denyKeys: [], guard };
    const budgets = keyBudgets(principal)!.map((x) => ({ key: x.key, cap: x.cap }));
    expect(budgets).toHaveLength(3);
    const slot = async (k: string) => Number(await clients[0]!.call('CLUSTER', 'KEYSLOT', k));
    const balance = accountKey(userId, 'bal');
    for (const x of budgets) expect(await slot(x.key)).toBe(await slot(balance));

    await a.initBalance(balance, 100n * PICO);
    for (const x of budgets) await a.initBalance(x.key, 0n, [], [], 60_000);
    const rules: Rule[] = [{ kind: 'window', key: accountKey(userId, 'rpm'), limit: 100, windowMs: 60_000, label: 'rpm', requests: true }];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? a : b).admit({ rules, leaseId: randomUUID(), leaseTtlMs: 60_000, reserve: { key: balance, amount: PICO }, budgets }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.find((r) => !r.ok)).toMatchObject({ reason: 'balance', index: 3 });
  });
});

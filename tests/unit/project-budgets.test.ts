// Projects and member budgets in the admission (docs/decisions/056): the budgets a key's request
// reserves against (its own, its project's, its member's) share the account's hash tag, so one
// limiter call (one Redis round trip, one slot on a cluster) reserves them all; either limiter
// refuses at the member's or project's budget with its index; a project's allowlist narrows the
// key's and its refusal names the project.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { keyBudgetError, keyBudgets, mayOutrunAdmission } from '@/lib/keys/admission';
import { checkAllowedModel, keyGuard } from '@/lib/keys/access';
import { hashTag } from '@/lib/limits/keys';
import { MemoryLimiter } from '@/lib/limits/memory-limiter';
import { RedisLimiter } from '@/lib/limits/redis-limiter';
import type { Limiter } from '@/lib/limits/types';
import type { Principal } from '@/lib/auth/principal';
import type { KeyControls } from '@/lib/keys/controls';
import { apiAllowed } from '@/lib/orgs/roles';

const PICO = 1_000_000_000_000n;
const none: KeyControls = {
  budgetPico: null,
  monthlyBudgetPico: null,
  models: [],
  rpm: null,
  tpm: null,
  concurrency: null,
  allowedIps: [],
  expiresAt: null,
};

function principal(userId: string, guard: Principal['guard']): Principal {
  return { keyId: randomUUID(), keyHash: 'h', userId, tier: 'pro', suspended: false, limits: null, denyKeys: [], guard };
}

const project = (monthly: bigint | null, models: string[] | null = null) => ({
  id: randomUUID(),
  name: 'Search',
  models: models ? new Set(models) : null,
  monthlyBudgetPico: monthly,
  budgetVersion: 2,
});
const member = (monthly: bigint | null) => ({ id: randomUUID(), name: 'dev@example.com', monthlyBudgetPico: monthly, budgetVersion: 0 });

describe('budgets of a key in a project, made by a member', () => {
  it('reserves the key, project and member budgets under the account hash tag, each counter per budget version and month', () => {
    const userId = randomUUID();
    const p = principal(userId, keyGuard('k', { ...none, monthlyBudgetPico: 5n * PICO }, 0, { project: project(3n * PICO), member: member(PICO) }));
    const budgets = keyBudgets(p, Date.UTC(2026, 10, 28))!;
    expect(budgets.map((b) => b.owner?.kind ?? 'key')).toEqual(['key', 'project', 'member']);
    expect(new Set(budgets.map((b) => hashTag(b.key)))).toEqual(new Set([`u:${userId}`]));
    expect(budgets[1]!.key).toMatch(/:pb:.+:2:m:2026-11$/);
    expect(budgets[2]!.cap).toBe(PICO);
    expect(mayOutrunAdmission(p)).toBe(false);
  });

  it('a member or project without a budget adds no counter, and a key with nothing else has no guard', () => {
    expect(keyGuard('k', none, 0, { project: project(null), member: member(null) })).toBeNull();
    const p = principal(randomUUID(), keyGuard('k', none, 0, { member: member(PICO) }));
    expect(keyBudgets(p)!.map((b) => b.owner?.kind)).toEqual(['member']);
  });

  it('the refusal names the member or the project, as a key budget 402', () => {
    const p = principal(randomUUID(), keyGuard('k', none, 0, { project: project(PICO), member: member(PICO) }));
    const [proj, mem] = keyBudgets(p)!;
    const a = keyBudgetError(p, proj!, -PICO + PICO / 4n, PICO / 2n);
    expect(a.code).toBe('key_budget_exceeded');
    expect(a.status).toBe(402);
    expect(a.message).toContain('Project budget exceeded: the project "Search"');
    expect(a.message).toContain('$0.25 left');
    expect(keyBudgetError(p, mem!, 0n, PICO * 2n).message).toContain('Member budget exceeded: the organization member dev@example.com');
  });
});

describe('a project allowlist', () => {
  it("narrows the key's own list; a model outside the project's is refused naming the project, one outside the key's naming the key", () => {
    const g = keyGuard('k', { ...none, models: ['a', 'b'] }, 0, { project: project(null, ['b', 'c']) })!;
    expect([...g.models!]).toEqual(['b']);
    expect(() => checkAllowedModel(g.models, 'b')).not.toThrow();
    expect(() => checkAllowedModel(g.models, 'a')).toThrow(/project "Search" may not use the model "a"/);
    expect(() => checkAllowedModel(g.models, 'c')).toThrow(/This API key may not use the model "c"/);
    const onlyProject = keyGuard('k', none, 0, { project: project(null, ['c']) })!;
    expect([...onlyProject.models!]).toEqual(['c']);
  });
});

describe('projects in the role table', () => {
  it('owners and admins manage projects; every role reads them', () => {
    expect(apiAllowed('admin', 'POST', '/api/projects')).toBe(true);
    expect(apiAllowed('admin', 'DELETE', '/api/projects/x')).toBe(true);
    for (const role of ['developer', 'billing'] as const) {
      expect(apiAllowed(role, 'GET', '/api/projects')).toBe(true);
      expect(apiAllowed(role, 'POST', '/api/projects')).toBe(false);
      expect(apiAllowed(role, 'PATCH', '/api/projects/x')).toBe(false);
    }
  });
});

const limiters: Limiter[] = [];
afterAll(async () => {
  for (const l of limiters) await l.close();
});

describe.each([
  ['in-process', () => new MemoryLimiter()],
  ['redis', () => new RedisLimiter(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')],
] as const)('the %s limiter with a member budget', (_name, make) => {
  it('admits exactly while the member budget covers the reservation, in the one call that takes the balance', async () => {
    const limiter = make();
    limiters.push(limiter);
    const userId = randomUUID();
    const p = principal(userId, keyGuard('k', none, 0, { project: project(10n * PICO), member: member(3n * PICO) }));
    const budgets = keyBudgets(p)!.map((b) => ({ key: b.key, cap: b.cap }));
    const bal = `gw:{u:${userId}}:bal`;
    await limiter.initBalance(bal, 100n * PICO);
    for (const b of budgets) await limiter.initBalance(b.key, 0n, [], [], 60_000);
    const admit = () => limiter.admit({ rules: [], leaseId: randomUUID(), leaseTtlMs: 30_000, reserve: { key: bal, amount: PICO }, budgets });
    const results = await Promise.all(Array.from({ length: 5 }, admit));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    const refused = results.find((r) => !r.ok)!;
    expect(refused).toMatchObject({ ok: false, reason: 'balance', index: 2 });
  });
});

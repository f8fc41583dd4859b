// Per-key controls: parsing and validation (400 naming the field), CIDR matching, and key budgets in
// both limiters (reserved and settled like the balance; exact under concurrency across instances).

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors';
import { ipMatcher, monthOf, normaliseIp, parseCidr, parseKeyControls } from '../../lib/keys/controls';
import { checkKeyAccess, checkKeyModel, keyGuard } from '../../lib/keys/access';
import { MemoryLimiter } from '../../lib/limits/memory-limiter';
import { RedisLimiter } from '../../lib/limits/redis-limiter';
import type { AdmitResult, Limiter } from '../../lib/limits/types';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const known = (m: string) => ['gpt-a', 'gpt-b', 'embed-a'].includes(m);

function fieldOf(fn: () => unknown): { status: number; param: string | null; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return { status: err.status, param: err.param, message: err.message };
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('CIDR parsing', () => {
  it('parses IPv4 and IPv6 ranges and bare addresses', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ family: 'ipv4', address: '10.0.0.0', prefix: 8 });
    expect(parseCidr('192.0.2.7')).toEqual({ family: 'ipv4', address: '192.0.2.7', prefix: 32 });
    expect(parseCidr('2001:db8::/32')).toEqual({ family: 'ipv6', address: '2001:db8::', prefix: 32 });
    expect(parseCidr('::1')).toEqual({ family: 'ipv6', address: '::1', prefix: 128 });
    expect(parseCidr('0.0.0.0/0')?.prefix).toBe(0);
  });

  it('rejects malformed ranges', () => {
    for (const bad of [
      '10.0.0.0/33',
      '2001:db8::/129',
      '10.0.0/8',
      '10.0.0.0/',
      '10.0.0.0/-1',
      'example.com',
      '300.1.1.1',
      '10.0.0.0/8/8',
      '',
      '1.2.3.4/ 8x',
    ]) {
      expect(parseCidr(bad), bad).toBeNull();
    }
  });

  it('matches IPv4 (also IPv4-mapped IPv6 client addresses) and IPv6 at the prefix boundary', () => {
    const match = ipMatcher(['203.0.113.0/24', '2001:db8:abcd::/48']);
    expect(match('203.0.113.0')).toBe(true);
    expect(match('203.0.113.255')).toBe(true);
    expect(match('203.0.114.0')).toBe(false);
    expect(match('203.0.112.255')).toBe(false);
    expect(match('::ffff:203.0.113.9')).toBe(true);
    expect(match('2001:db8:abcd:ffff::1')).toBe(true);
    expect(match('2001:db8:abce::1')).toBe(false);
    expect(match('unknown')).toBe(false);
    expect(normaliseIp('::FFFF:10.1.2.3')).toEqual({ address: '10.1.2.3', family: 'ipv4' });
  });
});

describe('key controls validation', () => {
  it('accepts every control and normalises them', () => {
    const c = parseKeyControls(
      {
        budget_usd: 25,
        monthly_budget_usd: '12.50',
        models: ['gpt-a', 'gpt-a'],
        rpm: 5,
        concurrency: 2,
        allowed_ips: ['10.0.0.0/8', '::1'],
        expires_at: '2099-01-31T23:59:59Z',
      },
      known,
    );
    expect(c.budgetPico).toBe(25_000_000_000_000n);
    expect(c.monthlyBudgetPico).toBe(12_500_000_000_000n);
    expect(c.models).toEqual(['gpt-a']);
    expect(c.allowedIps).toEqual(['10.0.0.0/8', '::1']);
    expect(c.expiresAt?.toISOString()).toBe('2099-01-31T23:59:59.000Z');
  });

  it('null clears a control; absent fields are left out', () => {
    expect(parseKeyControls({ budget_usd: null, models: null }, known)).toEqual({ budgetPico: null, models: [] });
    expect(parseKeyControls({}, known)).toEqual({});
  });

  it.each([
    [{ budget_usd: -1 }, 'budget_usd'],
    [{ budget_usd: 0 }, 'budget_usd'],
    [{ budget_usd: '1e3' }, 'budget_usd'],
    [{ monthly_budget_usd: true }, 'monthly_budget_usd'],
    [{ monthly_budget_usd: '0.0000000000001' }, 'monthly_budget_usd'],
    [{ models: 'gpt-a' }, 'models'],
    [{ models: ['nope'] }, 'models'],
    [{ rpm: 0 }, 'rpm'],
    [{ rpm: 1.5 }, 'rpm'],
    [{ concurrency: '3' }, 'concurrency'],
    [{ allowed_ips: ['10.0.0.0/33'] }, 'allowed_ips'],
    [{ allowed_ips: ['not-an-ip'] }, 'allowed_ips'],
    [{ expires_at: 'tomorrow' }, 'expires_at'],
    [{ expires_at: '2099-01-01T00:00:00' }, 'expires_at'],
    [{ expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
  ])('%j is a 400 naming %s', (body, field) => {
    const err = fieldOf(() => parseKeyControls(body as Record<string, unknown>, known));
    expect(err.status).toBe(400);
    expect(err.param).toBe(field);
    expect(err.message).toContain(field);
  });

  it('monthOf is the calendar month in UTC', () => {
    expect(monthOf(Date.UTC(2026, 10, 30, 23, 59, 59))).toEqual({ label: '2026-11', start: Date.UTC(2026, 10, 1) });
    expect(monthOf(Date.UTC(2026, 11, 1, 0, 0, 0)).label).toBe('2026-12');
  });
});

describe('key budgets read back from the database (#37 item 17)', () => {
  it('a Decimal of any stored size becomes pico-USD, not an exponent no parser takes', async () => {
    const { Prisma } = await import('../../lib/generated/prisma/client');
    const { keyControlsOf } = await import('../../lib/keys/queries');
    const row = (budget: string, monthly: string) => ({
      budgetUsd: new Prisma.Decimal(budget),
      monthlyBudgetUsd: new Prisma.Decimal(monthly),
      models: null,
      rpm: null,
      tpm: null,
      concurrency: null,
      allowedIps: null,
      expiresAt: null,
    });
    expect(new Prisma.Decimal('0.00000001').toString()).toBe('1e-8'); // what broke every key page
    expect(keyControlsOf(row('0.00000001', '0.000000000001'))).toMatchObject({ budgetPico: 10_000n, monthlyBudgetPico: 1n });
    expect(keyControlsOf(row('999999999999.999999999999', '1000000000'))).toMatchObject({
      budgetPico: 999_999_999_999_999_999_999_999n,
      monthlyBudgetPico: 1_000_000_000_000_000_000_000n,
    });
  });
});

describe('key guard checks', () => {
  const base = { budgetPico: null, monthlyBudgetPico: null, models: [], rpm: null, tpm: null, concurrency: null, allowedIps: [], expiresAt: null };

  it('a key without controls has no guard', () => {
    expect(keyGuard('k', base)).toBeNull();
  });

  it('expiry answers 401 key_expired from the expiry instant on', () => {
    const at = Date.now() + 1000;
    const guard = keyGuard('k', { ...base, expiresAt: new Date(at) });
    expect(() => checkKeyAccess(guard, '1.2.3.4', at - 1)).not.toThrow();
    const err = fieldOf(() => checkKeyAccess(guard, '1.2.3.4', at));
    expect(err.status).toBe(401);
  });

  it('addresses outside the ranges answer 403 ip_not_allowed', () => {
    const guard = keyGuard('k', { ...base, allowedIps: ['10.0.0.0/8'] });
    expect(() => checkKeyAccess(guard, '10.9.9.9')).not.toThrow();
    expect(fieldOf(() => checkKeyAccess(guard, '11.0.0.1')).status).toBe(403);
  });

  it('a model outside the allowlist answers 403 model_not_allowed naming it', () => {
    const guard = keyGuard('k', { ...base, models: ['gpt-a'] });
    expect(() => checkKeyModel(guard, 'gpt-a')).not.toThrow();
    const err = fieldOf(() => checkKeyModel(guard, 'gpt-b'));
    expect(err.status).toBe(403);
    expect(err.message).toContain('"gpt-b"');
  });
});

// ---- budgets in the limiters ----------------------------------------------------------------

const PREFIX = `test:keybudget:${randomUUID()}:`;

async function counter(limiter: Limiter, key: string): Promise<bigint> {
  // What a zero-cost probe reservation sees: the counter (minus the spend) after reaping expired leases.
  const r = await limiter.admit({
    rules: [],
    leaseId: randomUUID(),
    leaseTtlMs: 1000,
    reserve: { key: `${key}:bal`, amount: 0n },
    budgets: [{ key, cap: -1n }],
  });
  if (r.ok || r.reason !== 'balance') throw new Error(`unexpected ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  return r.available;
}

describe.each([
  ['memory', () => new MemoryLimiter()],
  ['redis', () => new RedisLimiter(REDIS_URL)],
] as [string, () => Limiter][])('%s limiter: key budgets', (_name, make) => {
  const limiter = make();
  afterAll(() => limiter.close());

  async function setup(cap: bigint) {
    const id = randomUUID();
    const bal = `${PREFIX}${id}:bal`;
    const budget = `${PREFIX}${id}:kb`;
    await limiter.initBalance(bal, 1_000_000n);
    await limiter.initBalance(`${budget}:bal`, 1n);
    return {
      bal,
      budget,
      input: (amount: bigint, leaseId = randomUUID(), leaseTtlMs = 10_000) => ({
        rules: [],
        leaseId,
        leaseTtlMs,
        reserve: { key: bal, amount },
        budgets: [{ key: budget, cap }],
      }),
    };
  }

  it('an unloaded budget counter answers balance_unknown with its index; loaded, reserves up to the cap exactly', async () => {
    const { budget, input } = await setup(100n);
    expect(await limiter.admit(input(10n))).toEqual({ ok: false, reason: 'balance_unknown', index: 1 });
    await limiter.initBalance(budget, -60n); // 60 already spent
    expect((await limiter.admit(input(40n))).ok).toBe(true); // 60 + 40 = 100: at the cap
    const refused: AdmitResult = await limiter.admit(input(1n));
    expect(refused).toEqual({ ok: false, reason: 'balance', available: -100n, index: 1 });
  });

  it('settlement returns the unused part; a replay changes nothing; an expired reservation returns to the budget', async () => {
    const { budget, input } = await setup(100n);
    await limiter.initBalance(budget, 0n);
    const a = randomUUID();
    expect((await limiter.admit(input(50n, a))).ok).toBe(true);
    await limiter.release({ leaseId: a, concurrencyKeys: [], budgets: [{ key: budget, delta: 30n, reserved: 50n }] }); // cost 20
    await limiter.release({ leaseId: a, concurrencyKeys: [], budgets: [{ key: budget, delta: 30n, reserved: 50n }] });
    expect(await counter(limiter, budget)).toBe(-20n);
    const crashed = randomUUID();
    expect((await limiter.admit(input(70n, crashed, 100))).ok).toBe(true);
    expect((await limiter.admit(input(20n))).ok).toBe(false); // 20 + 70 + 20 > 100
    await sleep(200);
    expect(await counter(limiter, budget)).toBe(-20n); // the crashed instance's 70 came back
    // Its late settlement (cost 15) charges the cost only, once.
    await limiter.release({ leaseId: crashed, concurrencyKeys: [], budgets: [{ key: budget, delta: 55n, reserved: 70n }] });
    await limiter.release({ leaseId: crashed, concurrencyKeys: [], budgets: [{ key: budget, delta: 55n, reserved: 70n }] });
    expect(await counter(limiter, budget)).toBe(-35n);
  });

  it('a refusal by the budget takes nothing from the balance', async () => {
    const { bal, budget, input } = await setup(10n);
    await limiter.initBalance(budget, 0n);
    expect((await limiter.admit(input(11n))).ok).toBe(false);
    const probe = await limiter.admit({ rules: [], leaseId: randomUUID(), leaseTtlMs: 1000, reserve: { key: bal, amount: 2_000_000n } });
    expect(probe).toEqual({ ok: false, reason: 'balance', available: 1_000_000n });
  });
});

describe('redis limiter: a key budget across two instances', () => {
  const a = new RedisLimiter(REDIS_URL);
  const b = new RedisLimiter(REDIS_URL);
  afterAll(() => Promise.all([a.close(), b.close()]));

  it('200 concurrent reservations of 7 against a cap of 100 admit exactly 14, in batches and alone', async () => {
    const id = randomUUID();
    const bal = `${PREFIX}${id}:bal`;
    const budget = `${PREFIX}${id}:kb`;
    await a.initBalance(bal, 1_000_000n);
    await a.initBalance(budget, 0n);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? a : b).admit({
          rules: [],
          leaseId: randomUUID(),
          leaseTtlMs: 10_000,
          reserve: { key: bal, amount: 7n },
          budgets: [{ key: budget, cap: 100n }],
          urgent: i % 5 === 0,
        }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(14);
  });

  it('a budget counter loaded with a TTL expires (to be loaded again); a balance does not', async () => {
    const id = randomUUID();
    await a.initBalance(`${PREFIX}${id}:kb`, -5n, [], [], 60_000);
    await a.initBalance(`${PREFIX}${id}:bal`, 5n);
    const ttl = await a.client.pttl(`${PREFIX}${id}:kb`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await a.client.pttl(`${PREFIX}${id}:bal`)).toBe(-1);
  });
});

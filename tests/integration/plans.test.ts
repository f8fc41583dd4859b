// Issue 42 items 1-3 and 6 against the built server: plans in the operator config, granted by the
// operator and by a redemption code, paid from the plan's windows in the admission call (never the
// balance), a used-up window refused with a 429 naming it and its reset (or overflowing to the
// balance), a window's reset, and a nearly used-up window under concurrency on two instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { usdToPico } from '@/lib/money';

let gw: RunningGateway;
let gw2: RunningGateway;
let fake: FakeUpstream;
let admin: TestAccount & { cookie: string };

const plans = [
  // USD of usage at list prices, refused past a window.
  {
    id: 'coder',
    name: 'Coder',
    price_usd_monthly: '20',
    unit: 'usd',
    windows: [
      { name: '5h', hours: 5, limit: '0.00005' },
      { name: 'weekly', days: 7, limit: '0.0002' },
    ],
    models: ['gpt-4o-mini'],
    overflow: 'refuse',
  },
  // Requests, overflowing to the balance.
  {
    id: 'flex',
    name: 'Flex',
    price_usd_monthly: '10',
    unit: 'requests',
    windows: [{ name: 'daily', days: 1, limit: '2' }],
    models: ['*'],
    overflow: 'balance',
    tier: 'pro',
  },
  // Requests, refused: the concurrency case and the reset.
  { id: 'five', name: 'Five', price_usd_monthly: '5', unit: 'requests', windows: [{ name: '5h', hours: 5, limit: '5' }], models: ['*'], overflow: 'refuse' },
  {
    id: 'tok',
    name: 'Tokens',
    price_usd_monthly: '5',
    unit: 'tokens',
    windows: [{ name: 'daily', days: 1, limit: '100000' }],
    models: ['*'],
    overflow: 'refuse',
  },
];

/** Limits that never refuse these tests' bursts: what refuses is the plan. */
const ROOMY = { tier: 'enterprise' as const, balanceUsd: '1', limits: { rpm: 10_000, rph: 100_000, concurrency: 100 } };

const chat = (g: RunningGateway, key: string, model = 'gpt-4o-mini') =>
  fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hello there' }] }),
  });

async function signIn(a: TestAccount): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

const api = (cookie: string, method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { cookie, origin: gw.url, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function grant(userId: string, plan: string, days = 30) {
  const res = await api(admin.cookie, 'POST', `/api/admin/accounts/${userId}`, { action: 'grant_plan', plan, days });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { plan: { plan: { id: string }; windows: { name: string; used: string | number }[] } };
}

/** The written request-log rows of an account once `count` served ones are in (the writer flushes within LOG_FLUSH_MS). */
async function rowsOf(userId: string, count: number) {
  const db = await getDb();
  for (let i = 0; i < 100; i++) {
    const rows = await db.requestLog.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } });
    if (rows.filter((r) => r.status === 200).length >= count) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`fewer than ${count} log rows`);
}

beforeAll(async () => {
  fake = await startFakeUpstream();
  const config = testConfig({ openaiUrls: [fake.url], overrides: { plans, limits: { login_per_ip_per_minute: 10_000 } } });
  [gw, gw2] = await Promise.all([startGateway({ config }), startGateway({ config })]);
  const a = await createAccount({ balanceUsd: '1' });
  await (await getDb()).user.update({ where: { id: a.userId }, data: { role: 'admin' } });
  admin = { ...a, cookie: await signIn(a) };
}, 120_000);

afterAll(async () => {
  await Promise.all([gw?.stop(), gw2?.stop()]);
  await fake?.close();
});

describe('a USD plan that refuses past its window', () => {
  it('pays from the plan (balance untouched) until the 5h window is used up, then 429 naming the window and its reset', async () => {
    const a = await createAccount(ROOMY);
    const granted = await grant(a.userId, 'coder');
    expect(granted.plan.plan.id).toBe('coder');
    const before = await balanceOf(a.userId);
    let paid = 0n;
    let served = 0;
    let refused: Response | null = null;
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await chat(gw, a.apiKey);
      if (res.status === 429) {
        refused = res;
        break;
      }
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('x-service-billed-to')).toBe('plan');
      expect(res.headers.get('x-service-plan')).toBe('coder');
      expect(res.headers.get('x-service-plan-window')).toBe('5h');
      expect(Date.parse(res.headers.get('x-service-plan-reset') ?? '')).toBeGreaterThan(Date.now());
      paid += usdToPico(res.headers.get('x-service-cost-usd')!);
      served++;
      await res.text();
    }
    expect(refused, 'the window was never used up').not.toBeNull();
    const body = (await refused!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('the 5h window of Coder ($0.00005)');
    expect(refused!.headers.get('x-service-plan-window')).toBe('5h');
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(4 * 3600);
    expect(retryAfter).toBeLessThanOrEqual(5 * 3600);
    // Never overspent: what was admitted fits the window.
    expect(paid).toBeGreaterThan(0n);
    expect(paid).toBeLessThanOrEqual(usdToPico('0.00005'));
    // The plan paid: the balance is what it was, and the log says which pool paid.
    const rows = await rowsOf(a.userId, served);
    expect(served).toBeGreaterThan(1);
    expect(rows.filter((r) => r.status === 200).every((r) => r.billedTo === 'plan')).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await balanceOf(a.userId)).toBe(before);
    // The user's view: each window's use is what the log recorded, to the pico-dollar.
    const cookie = await signIn(a);
    const view = (await (await api(cookie, 'GET', '/api/plan')).json()) as {
      current: { windows: { name: string; used: string; remaining: string; resets_at: string }[] };
      plans: { id: string }[];
    };
    expect(view.plans.map((p) => p.id)).toEqual(['coder', 'flex', 'five', 'tok']);
    const recorded = rows.filter((r) => r.billedTo === 'plan').reduce((s, r) => s + usdToPico(r.costUsd.toFixed(12)), 0n);
    expect(usdToPico(view.current.windows[0]!.used)).toBe(recorded);
    expect(usdToPico(view.current.windows[1]!.used)).toBe(recorded);
    // The log API and a model outside the plan: the balance pays.
    const other = await chat(gw, a.apiKey, 'gpt-4o');
    expect(other.status, await other.clone().text()).toBe(200);
    expect(other.headers.get('x-service-billed-to')).toBe('balance');
  });
});

describe('a requests plan that overflows to the balance', () => {
  it('two requests on the plan, the third billed to the balance; the tier granted while active', async () => {
    const a = await createAccount({ balanceUsd: '1' });
    await grant(a.userId, 'flex');
    const billed: string[] = [];
    // gpt-4o is not on the free tier: served because the plan grants pro.
    for (const model of ['gpt-4o', 'gpt-4o-mini', 'gpt-4o-mini']) {
      const res = await chat(gw, a.apiKey, model);
      expect(res.status, await res.clone().text()).toBe(200);
      billed.push(res.headers.get('x-service-billed-to')!);
      await res.text();
    }
    expect(billed).toEqual(['plan', 'plan', 'balance']);
    const rows = await rowsOf(a.userId, 3);
    expect(rows.map((r) => r.billedTo)).toEqual(['plan', 'plan', null]);
    // Only the third is charged: the ledger has one usage entry, of its cost.
    await new Promise((r) => setTimeout(r, 300));
    const ledger = await (await getDb()).ledgerEntry.findMany({ where: { userId: a.userId, kind: 'usage' } });
    expect(ledger.map((e) => e.reference)).toEqual([rows[2]!.id]);
    expect(ledger[0]!.amountUsd.toFixed(12)).toBe(rows[2]!.costUsd.negated().toFixed(12));
    const me = await api(await signIn(a), 'GET', '/api/plan');
    expect(((await me.json()) as { current: { plan: { tier: string } } }).current.plan.tier).toBe('pro');
    // Without the plan, the account's own tier again.
    expect((await api(admin.cookie, 'POST', `/api/admin/accounts/${a.userId}`, { action: 'end_plan' })).status).toBe(200);
    await expect.poll(async () => (await chat(gw, a.apiKey, 'gpt-4o')).status, { timeout: 10_000 }).toBe(403);
  });
});

describe('a nearly used-up window on two instances', () => {
  it('20 concurrent requests across two gateways: exactly the window (5) is admitted', async () => {
    const a = await createAccount(ROOMY);
    await grant(a.userId, 'five');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => chat(i % 2 ? gw2 : gw, a.apiKey).then(async (r) => ({ status: r.status, text: await r.text() }))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect(r.text).toContain('the 5h window of Five (5 requests)');
  });

  it("a window's reset: the next window admits again (its counter starts from the log)", async () => {
    const a = await createAccount(ROOMY);
    await grant(a.userId, 'five');
    // Anchored so that the current 5h window ends in 4 s.
    const db = await getDb();
    await db.subscription.updateMany({ where: { userId: a.userId, status: 'active' }, data: { startedAt: new Date(Date.now() - 5 * 3_600_000 + 4000) } });
    const first = await Promise.all(Array.from({ length: 6 }, () => chat(gw, a.apiKey).then(async (r) => (await r.text(), r.status))));
    // Requests land in the old window only while it lasts (on a loaded machine some may already be in the next).
    expect(first.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    await new Promise((r) => setTimeout(r, 4500));
    const after = await chat(gw, a.apiKey);
    expect(after.status, await after.clone().text()).toBe(200);
    expect(after.headers.get('x-service-billed-to')).toBe('plan');
    expect(Date.parse(after.headers.get('x-service-plan-reset')!) - Date.now()).toBeGreaterThan(4 * 3_600_000);
  });
});

describe('plans by redemption code', () => {
  it('the operator makes plan codes; redeeming one grants the plan; a bad plan is a 400 naming it', async () => {
    const bad = await api(admin.cookie, 'POST', '/api/admin/codes', { count: 1, plan: 'nope', plan_days: 30 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('plan');
    const made = await api(admin.cookie, 'POST', '/api/admin/codes', { count: 1, plan: 'tok', plan_days: 30 });
    expect(made.status, await made.clone().text()).toBe(201);
    const { codes, plan } = (await made.json()) as { codes: { code: string }[]; plan: { id: string; days: number } };
    expect(plan).toEqual({ id: 'tok', days: 30 });
    const a = await createAccount({ balanceUsd: '1' });
    const cookie = await signIn(a);
    const redeemed = await api(cookie, 'POST', '/api/payment/redeem', { code: codes[0]!.code });
    expect(redeemed.status, await redeemed.clone().text()).toBe(200);
    const r = (await redeemed.json()) as { credited_usd: string; plan: { id: string; until: string } };
    expect(r.credited_usd).toBe('0');
    expect(r.plan.id).toBe('tok');
    expect(Date.parse(r.plan.until) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const res = await chat(gw, a.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-billed-to')).toBe('plan');
    await res.text();
    // Tokens counted: the window's use is the row's tokens.
    const [row] = await rowsOf(a.userId, 1);
    const view = (await (await api(cookie, 'GET', '/api/plan')).json()) as { current: { windows: { used: number }[] } };
    expect(view.current.windows[0]!.used).toBe(row!.promptTokens + row!.completionTokens + row!.cacheReadTokens + row!.cacheWriteTokens);
    // The same code again: refused.
    expect((await api(cookie, 'POST', '/api/payment/redeem', { code: codes[0]!.code })).status).toBe(409);
  });
});

describe('plans edited in the console', () => {
  it('a plan saved in the console is used at once on both instances; bad fields are named; retired plans are not offered but kept', async () => {
    // A new plan, from the console: a 2-request window.
    const bad = await api(admin.cookie, 'PUT', '/api/admin/plans/duo', {
      name: 'Duo',
      price_usd_monthly: '3',
      unit: 'requests',
      windows: [{ name: 'd', days: 1, limit: '2.5' }],
      models: ['nope'],
    });
    expect(bad.status).toBe(400);
    const badText = ((await bad.json()) as { error: { message: string } }).error.message;
    expect(badText).toContain('models.0: unknown model nope');
    expect(badText).toContain('windows.0.limit: must be a whole number of requests');
    const saved = await api(admin.cookie, 'PUT', '/api/admin/plans/duo', {
      name: 'Duo',
      price_usd_monthly: '3',
      unit: 'requests',
      windows: [{ name: 'd', days: 1, limit: '2' }],
      models: ['*'],
      overflow: 'refuse',
    });
    expect(saved.status, await saved.clone().text()).toBe(200);
    expect(((await saved.json()) as { source: string }).source).toBe('console');
    const a = await createAccount(ROOMY);
    await grant(a.userId, 'duo');
    // The other instance learnt the plan too (announced): its requests count against the same window.
    const statuses: number[] = [];
    for (const g of [gw2, gw, gw2]) statuses.push(await chat(g, a.apiKey).then(async (r) => (await r.text(), r.status)));
    expect(statuses).toEqual([200, 200, 429]);
    // Edited: a larger window, used at once.
    const edited = await api(admin.cookie, 'PUT', '/api/admin/plans/duo', {
      name: 'Duo',
      price_usd_monthly: '3',
      unit: 'requests',
      windows: [{ name: 'd', days: 1, limit: '3' }],
      models: ['*'],
      overflow: 'refuse',
    });
    expect(edited.status).toBe(200);
    await expect.poll(async () => (await chat(gw2, a.apiKey)).status, { timeout: 10_000 }).toBe(200);
    // Retired: no longer offered or granted, its subscriber keeps it.
    expect((await api(admin.cookie, 'POST', '/api/admin/plans/duo', { action: 'retire' })).status).toBe(200);
    const cookie = await signIn(a);
    const view = (await (await api(cookie, 'GET', '/api/plan')).json()) as { current: { plan: { id: string } }; plans: { id: string }[] };
    expect(view.plans.map((p) => p.id)).not.toContain('duo');
    expect(view.current.plan.id).toBe('duo');
    const code = await api(admin.cookie, 'POST', '/api/admin/codes', { count: 1, plan: 'duo', plan_days: 30 });
    expect(code.status).toBe(400);
    // Reset: a console-only plan is removed.
    expect((await api(admin.cookie, 'POST', '/api/admin/plans/duo', { action: 'reset' })).status).toBe(200);
    const list = (await (await api(admin.cookie, 'GET', '/api/admin/plans')).json()) as { data: { id: string }[] };
    expect(list.data.map((p) => p.id)).toEqual(['coder', 'flex', 'five', 'tok']);
  });
});

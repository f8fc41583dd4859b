// The operator console's API against the built server: roles (ADMIN_EMAILS, set-role), 401/403,
// account actions with the CLI's effects, the audit log, runtime channel overrides across two
// instances and a restart, the channel test, automatic disable and re-enable, redemption codes.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { getDb } from '@/lib/db';

const run = promisify(execFile);
const adminEmail = `ops-${randomBytes(4).toString('hex')}@example.com`;
// Listed too, but registered on the web by someone else first (#37 item 3).
const squattedEmail = `ops-squat-${randomBytes(4).toString('hex')}@example.com`;
const ADMIN_EMAILS = `${adminEmail},${squattedEmail}`;
const adminCli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { cwd: ROOT, env: { ...process.env, ADMIN_EMAILS } });

let gw: RunningGateway;
let gw2: RunningGateway;
let fake1: FakeUpstream;
let fake2: FakeUpstream;
let ipCounter = 0;
const freshIp = () => `10.30.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;
const password = 'sturdy-pass-42';

function config() {
  return testConfig({
    channelPrefix: 'adm-',
    openaiUrls: [fake1.url, fake2.url],
    overrides: { circuit_breaker: { failures: 3, cooldown_ms: 2000, auto_disable_after: 3, probe_interval_ms: 500 } },
  });
}

async function register(base: string, email = `u-${randomBytes(5).toString('hex')}@example.com`) {
  const res = await fetch(`${base}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp() },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { user: { id: string } };
  return { email, userId: body.user.id, cookie: res.headers.get('set-cookie')!.split(';')[0] };
}

async function login(base: string, email: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp() },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  return res.headers.get('set-cookie')!.split(';')[0];
}

function call(base: string, cookie: string | null, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { origin: base, 'x-forwarded-for': freshIp() };
  if (cookie) headers.cookie = cookie;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function chat(base: string, apiKey: string) {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

let admin: Awaited<ReturnType<typeof register>>;

beforeAll(async () => {
  fake1 = await startFakeUpstream();
  fake2 = await startFakeUpstream();
  const env = { TRUST_PROXY: '1', ADMIN_EMAILS };
  // The second instance serves /v1 through the route handlers (next start): overrides hold on both paths.
  [gw, gw2] = await Promise.all([startGateway({ config: config(), env }), startGateway({ config: config(), env, mode: 'next' })]);
  const created = JSON.parse((await adminCli('create-user', '--email', adminEmail, '--password', password)).stdout) as { userId: string; role: string };
  expect(created.role).toBe('admin');
  admin = { email: adminEmail, userId: created.userId, cookie: await login(gw.url, adminEmail) };
}, 120_000);

afterAll(async () => {
  await Promise.all([gw?.stop(), gw2?.stop()]);
  await Promise.all([fake1?.close(), fake2?.close()]);
});

describe('operator role', { timeout: 60_000 }, () => {
  it('answers 401 without a session and 403 to a non-admin, on the API and on the pages', async () => {
    const user = await register(gw.url);
    expect((await call(gw.url, null, 'GET', '/api/admin/accounts')).status).toBe(401);
    expect((await call(gw.url, user.cookie, 'GET', '/api/admin/accounts')).status).toBe(403);
    expect((await call(gw.url, user.cookie, 'POST', `/api/admin/channels/adm-openai-1`, { disabled: true })).status).toBe(403);
    expect((await call(gw.url, user.cookie, 'POST', '/api/admin/codes', { amount_usd: '5', count: 1 })).status).toBe(403);
    expect((await fetch(`${gw.url}/admin`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${gw.url}/admin/channels`, { headers: { cookie: user.cookie }, redirect: 'manual' })).status).toBe(403);
  });

  it('ADMIN_EMAILS: a listed email registered on the web stays a normal user; the CLI creates the operator, audited', async () => {
    const squatter = await register(gw.url, squattedEmail);
    expect((await call(gw.url, squatter.cookie, 'GET', '/api/admin/accounts')).status).toBe(403);
    expect((await fetch(`${gw.url}/admin/accounts`, { headers: { cookie: squatter.cookie }, redirect: 'manual' })).status).toBe(403);
    expect((await (await getDb()).user.findUniqueOrThrow({ where: { id: squatter.userId } })).role).toBe('user');
    // The operator cannot be handed the squatter's account by creating it: the address is taken.
    await expect(adminCli('create-user', '--email', squattedEmail, '--password', password)).rejects.toMatchObject({
      stderr: expect.stringMatching(/already exists/),
    });

    const res = await call(gw.url, admin.cookie, 'GET', '/api/admin/accounts?q=' + encodeURIComponent(adminEmail));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { email: string; role: string }[] };
    expect(body.data).toEqual([expect.objectContaining({ email: adminEmail, role: 'admin' })]);
    expect((await fetch(`${gw.url}/admin`, { headers: { cookie: admin.cookie } })).status).toBe(200);
    const rows = await (await getDb()).auditLog.findMany({ where: { targetId: admin.userId, action: 'account.set_role' } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'cli', before: { role: 'user' }, after: { role: 'admin' } });
  });

  it('set-role on the CLI grants and removes the role, audited', async () => {
    const user = await register(gw.url);
    const { stdout } = await adminCli('set-role', '--email', user.email, '--role', 'admin');
    expect(JSON.parse(stdout)).toMatchObject({ userId: user.userId, role: 'admin' });
    expect((await call(gw.url, user.cookie, 'GET', '/api/admin/accounts')).status).toBe(200);
    await adminCli('set-role', '--email', user.email, '--role', 'user');
    expect((await call(gw.url, user.cookie, 'GET', '/api/admin/accounts')).status).toBe(403);
    const rows = await (await getDb()).auditLog.findMany({ where: { targetId: user.userId }, orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.actor, r.action, r.after])).toEqual([
      ['cli', 'account.set_role', { role: 'admin' }],
      ['cli', 'account.set_role', { role: 'user' }],
    ]);
    await expect(adminCli('set-role', '--email', user.email, '--role', 'root')).rejects.toMatchObject({ code: 2 });
  });

  it('every CLI command answers --help with its usage, exit 0, no stack trace and nothing changed', async () => {
    for (const command of ['create-user', 'set-tier', 'set-limits', 'suspend', 'unsuspend', 'credit', 'create-key', 'revoke-key', 'set-role', 'create-codes']) {
      const { stdout, stderr } = await adminCli(command, '--help');
      expect(stderr, command).toBe('');
      expect(stdout, command).toContain(`  ${command} `);
      expect(stdout, command).not.toMatch(/at .*\.ts:\d+|TypeError|ERR_PARSE_ARGS/);
    }
    expect((await adminCli('create-codes', '--help')).stdout).toContain('--usd N --count K');
    expect((await adminCli('create-user', '-h')).stdout).toContain('registering a listed email on the web never makes an operator');
  }, 180_000);

  it('refuses a cross-site admin mutation', async () => {
    const res = await fetch(`${gw.url}/api/admin/channels/adm-openai-1`, {
      method: 'POST',
      headers: { cookie: admin.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(res.status).toBe(403);
  });

  it('the audit log is append-only in the database itself', async () => {
    const db = await getDb();
    await expect(db.$executeRawUnsafe(`UPDATE "AuditLog" SET action = 'x'`)).rejects.toThrow(/append-only/);
    await expect(db.$executeRawUnsafe(`DELETE FROM "AuditLog"`)).rejects.toThrow(/append-only/);
  });
});

describe('accounts', { timeout: 60_000 }, () => {
  it('credits, debits, suspends and revokes with immediate effect on every instance, each audited', async () => {
    const acct = await createAccount();
    const base = `/api/admin/accounts/${acct.userId}`;
    expect((await chat(gw2.url, acct.apiKey)).status).toBe(402);

    const credit = await call(gw.url, admin.cookie, 'POST', base, { action: 'adjust_balance', amount_usd: '2.5', note: 'goodwill' });
    expect(credit.status).toBe(200);
    expect(await credit.json()).toMatchObject({ balance_usd: '2.5', live: 'applied' });
    // The other instance admits against the shared live balance at once.
    expect((await chat(gw2.url, acct.apiKey)).status).toBe(200);

    const tooMuch = await call(gw.url, admin.cookie, 'POST', base, { action: 'adjust_balance', amount_usd: '-100', note: 'x' });
    expect(tooMuch.status).toBe(400);
    expect(((await tooMuch.json()) as { error: { message: string } }).error.message).toMatch(/exceeds the balance/);
    const bad = await call(gw.url, admin.cookie, 'POST', base, { action: 'adjust_balance', amount_usd: '1e3' });
    expect(bad.status).toBe(400);
    const debit = await call(gw.url, admin.cookie, 'POST', base, { action: 'adjust_balance', amount_usd: '-0.5', note: 'correction' });
    expect(debit.status).toBe(200);

    const detail = (await (await call(gw.url, admin.cookie, 'GET', base)).json()) as {
      account: { balance_usd: string };
      ledger: { kind: string; note: string }[];
      requests: unknown[];
      keys: { id: string }[];
    };
    expect(detail.ledger.map((e) => e.note)).toEqual(expect.arrayContaining(['goodwill', 'correction']));
    expect(detail.requests.length).toBeGreaterThanOrEqual(1);

    expect((await call(gw.url, admin.cookie, 'POST', base, { action: 'set_status', status: 'suspended' })).status).toBe(200);
    expect((await chat(gw2.url, acct.apiKey)).status).toBe(403);
    expect((await call(gw.url, admin.cookie, 'POST', base, { action: 'set_status', status: 'active' })).status).toBe(200);
    await waitFor(async () => (await chat(gw2.url, acct.apiKey)).status === 200, 10_000);

    const tier = await call(gw.url, admin.cookie, 'POST', base, { action: 'set_tier', tier: 'pro', pinned: true });
    expect(await tier.json()).toMatchObject({ tier: 'pro', tier_pinned: true });
    const limits = await call(gw.url, admin.cookie, 'POST', base, { action: 'set_limits', limits: { rpm: 5 } });
    expect(await limits.json()).toMatchObject({ limits: { rpm: 5 } });

    expect((await call(gw.url, admin.cookie, 'DELETE', `${base}/keys/${acct.keyId}`)).status).toBe(200);
    expect((await chat(gw2.url, acct.apiKey)).status).toBe(401);

    const audit = await (await getDb()).auditLog.findMany({ where: { OR: [{ targetId: acct.userId }, { targetId: acct.keyId }] }, orderBy: { id: 'asc' } });
    expect(audit.map((a) => a.action)).toEqual([
      'account.credit',
      'account.debit',
      'account.suspend',
      'account.unsuspend',
      'account.set_tier',
      'account.set_limits',
      'key.revoke',
    ]);
    expect(audit.every((a) => a.actorId === admin.userId && a.actor === adminEmail)).toBe(true);
    expect(audit[0]).toMatchObject({ before: { balanceUsd: '0' }, after: { balanceUsd: '2.5', amountUsd: '2.5' }, note: 'goodwill' });
  });

  it('a bad action or an unknown account is a 4xx, never a 500', async () => {
    const missing = await call(gw.url, admin.cookie, 'GET', '/api/admin/accounts/00000000-0000-0000-0000-000000000000');
    expect(missing.status).toBe(404);
    expect((await call(gw.url, admin.cookie, 'GET', '/api/admin/accounts/not-an-id')).status).toBe(404);
    const acct = await createAccount();
    expect((await call(gw.url, admin.cookie, 'POST', `/api/admin/accounts/${acct.userId}`, { action: 'explode' })).status).toBe(400);
    expect((await call(gw.url, admin.cookie, 'POST', `/api/admin/accounts/${acct.userId}`, { action: 'set_tier', tier: 'gold' })).status).toBe(400);
  });

  it('search takes its text literally: a NUL is no 500, % and _ are no wildcards; a malformed id is a 404 on every account route', async () => {
    const search = async (q: string) => {
      const res = await call(gw.url, admin.cookie, 'GET', `/api/admin/accounts?q=${q}`);
      expect(res.status, q).toBe(200);
      return ((await res.json()) as { data: { email: string }[] }).data.map((a) => a.email);
    };
    expect(await search('%00')).toEqual(expect.any(Array));
    expect(await search(encodeURIComponent('%'))).toEqual([]);
    expect(await search(encodeURIComponent('_'))).toEqual([]);
    expect(await search(`${encodeURIComponent(adminEmail.slice(0, 10))}%00`)).toEqual([adminEmail]);
    expect(await search(encodeURIComponent(adminEmail.replace('-', '_')))).toEqual([]);
    expect(await search(encodeURIComponent(adminEmail.toUpperCase()))).toEqual([adminEmail]);
    for (const id of ['not-an-id', '------------------------------------', '%00', '00000000-0000-0000-0000-00000000000g']) {
      const base = `/api/admin/accounts/${id}`;
      expect((await call(gw.url, admin.cookie, 'GET', base)).status, id).toBe(404);
      expect((await call(gw.url, admin.cookie, 'POST', base, { action: 'set_role', role: 'admin' })).status, id).toBe(404);
      expect((await call(gw.url, admin.cookie, 'POST', base, { action: 'adjust_balance', amount_usd: '1' })).status, id).toBe(404);
      expect((await call(gw.url, admin.cookie, 'DELETE', `${base}/keys/${id}`)).status, id).toBe(404);
      expect((await call(gw.url, admin.cookie, 'GET', `/api/admin/codes/${id}`)).status, id).toBe(404);
      expect((await call(gw.url, admin.cookie, 'GET', `/api/admin/logs/${id}`)).status, id).toBeLessThan(500);
      expect((await fetch(`${gw.url}/admin/accounts/${id}`, { headers: { cookie: admin.cookie } })).status, id).toBe(404);
    }
    const byEmail = await call(gw.url, admin.cookie, 'GET', `/api/admin/logs?account=a%00b@example.com`);
    expect(byEmail.status).toBeLessThan(500);
    expect((await fetch(`${gw.url}/admin/accounts?q=%00`, { headers: { cookie: admin.cookie } })).status).toBe(200);
  });
});

describe('channels', { timeout: 90_000 }, () => {
  it('lists channels with their state and never their key', async () => {
    const res = await call(gw.url, admin.cookie, 'GET', '/api/admin/channels');
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toContain('upstream-secret-openai');
    const body = JSON.parse(text) as { data: { name: string; keyHint: string; disabled: boolean }[] };
    expect(body.data.map((c) => c.name)).toEqual(['adm-openai-1', 'adm-openai-2']);
    expect(body.data[0].keyHint).toBe('…ai-1');
    for (const page of ['/admin', '/admin/channels', '/admin/audit']) {
      const html = await (await fetch(gw.url + page, { headers: { cookie: admin.cookie } })).text();
      expect(html).toContain(page === '/admin/audit' ? 'Audit log' : 'adm-openai-1');
      expect(html).not.toContain('upstream-secret');
    }
  });

  it('disabling a channel moves traffic on every instance within a second, and it survives a restart', async () => {
    const acct = await createAccount({ balanceUsd: '5' });
    fake1.reset();
    fake2.reset();
    expect((await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider')).toBe('adm-openai-1');

    const off = await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-1', { disabled: true });
    expect(off.status).toBe(200);
    // gw2 learns it through Redis (polled every 0.5 s): allow for a loaded machine.
    await waitFor(async () => (await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider') === 'adm-openai-2', 10_000);
    const before = fake1.requests.length;
    for (let i = 0; i < 5; i++) expect((await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider')).toBe('adm-openai-2');
    expect(fake1.requests.length).toBe(before);

    // A restarted instance reads it back.
    await gw2.stop();
    gw2 = await startGateway({ config: config(), env: { TRUST_PROXY: '1', ADMIN_EMAILS }, mode: 'next' });
    await waitFor(async () => (await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider') === 'adm-openai-2', 10_000);
    expect((await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider')).toBe('adm-openai-2');

    const on = await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-1', { disabled: false });
    expect(on.status).toBe(200);
    await waitFor(async () => (await chat(gw2.url, acct.apiKey)).headers.get('x-service-provider') === 'adm-openai-1', 10_000);

    const row = await (await getDb()).channelOverride.findUniqueOrThrow({ where: { channelId: 'adm-openai-1' } });
    expect(row.disabled).toBe(false);
    const audit = await (
      await getDb()
    ).auditLog.findMany({
      where: { targetType: 'channel', targetId: 'adm-openai-1', action: { in: ['channel.disable', 'channel.enable'] } },
      orderBy: { id: 'asc' },
    });
    expect(audit.slice(-2).map((a) => a.action)).toEqual(['channel.disable', 'channel.enable']);
  });

  it('a weight override is validated and applied', async () => {
    expect((await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-2', { weight: -1 })).status).toBe(400);
    expect((await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/nope', { weight: 1 })).status).toBe(404);
    const res = await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-2', { weight: 7 });
    expect(await res.json()).toMatchObject({ weight: 7, disabled: false });
    const list = (await (await call(gw.url, admin.cookie, 'GET', '/api/admin/channels')).json()) as { data: { name: string; weightOverride: number | null }[] };
    expect(list.data.find((c) => c.name === 'adm-openai-2')!.weightOverride).toBe(7);
    await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-2', { weight: null });
  });

  it('the test button sends a tiny real request and reports the result', async () => {
    fake2.reset();
    const ok = (await (await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-2/test')).json()) as {
      ok: boolean;
      latencyMs: number;
      model: string;
    };
    expect(ok).toMatchObject({ ok: true, model: 'gpt-4o-mini' });
    expect(ok.latencyMs).toBeGreaterThanOrEqual(0);
    const sent = fake2.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.json).toMatchObject({ max_tokens: 1 });
    fake2.queue({ type: 'status', status: 500 });
    const bad = (await (await call(gw.url, admin.cookie, 'POST', '/api/admin/channels/adm-openai-2/test')).json()) as { ok: boolean; detail: string };
    expect(bad).toMatchObject({ ok: false, detail: 'HTTP 500' });
  });

  it('disables a channel after N consecutive failures and enables it again once a probe passes, audited', async () => {
    // Two accounts: one account's failed requests alone never disable a channel (auto_disable_min_accounts: 2).
    const accts = [await createAccount({ balanceUsd: '5' }), await createAccount({ balanceUsd: '5' })];
    fake1.reset();
    fake1.setDefault({ type: 'status', status: 500 });
    // Each request fails over to adm-openai-2; adm-openai-1's consecutive failures reach auto_disable_after (3).
    for (let i = 0; i < 6; i++) expect((await chat(gw.url, accts[i % 2].apiKey)).status).toBe(200);
    const disabled = await waitFor(async () => {
      const row = await (await getDb()).channelOverride.findUnique({ where: { channelId: 'adm-openai-1' } });
      return row?.disabled && row.reason === 'auto' ? row : null;
    }, 10_000);
    expect(disabled.updatedBy).toBe('system');
    fake1.setDefault({ type: 'ok' });
    await waitFor(async () => {
      const row = await (await getDb()).channelOverride.findUnique({ where: { channelId: 'adm-openai-1' } });
      return row && !row.disabled;
    }, 15_000);
    const audit = await (
      await getDb()
    ).auditLog.findMany({ where: { targetType: 'channel', targetId: 'adm-openai-1', actor: 'system' }, orderBy: { id: 'asc' } });
    expect(audit.slice(-2).map((a) => a.action)).toEqual(['channel.disable', 'channel.enable']);
    expect(audit.at(-1)!.note).toMatch(/probe passed/);
  });
});

describe('redemption codes', { timeout: 60_000 }, () => {
  it('the CLI prints a JSON array of codes', async () => {
    const { stdout } = await adminCli('create-codes', '--usd', '1.25', '--count', '3', '--expires', '2099-01-01T00:00:00Z');
    const codes = JSON.parse(stdout) as string[];
    expect(codes).toHaveLength(3);
    for (const c of codes) expect(c).toMatch(/^GW-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    const stored = await (await getDb()).redemptionCode.findMany({ where: { lastFour: { in: codes.map((c) => c.slice(-4)) } } });
    expect(JSON.stringify(stored)).not.toContain(codes[0].replace(/-/g, '').slice(2));
  });

  it('a code credits exactly once under concurrent redemption; used, unknown and expired codes are 4xx', async () => {
    const created = await call(gw.url, admin.cookie, 'POST', '/api/admin/codes', { amount_usd: '3', count: 2 });
    expect(created.status).toBe(201);
    const batch = (await created.json()) as { batchId: string; codes: { code: string }[] };
    const users = await Promise.all(Array.from({ length: 4 }, () => register(gw.url)));
    const code = batch.codes[0].code;
    const answers = await Promise.all(users.map((u, i) => call(i % 2 ? gw2.url : gw.url, u.cookie, 'POST', '/api/payment/redeem', { code })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    const winner = users[answers.findIndex((r) => r.status === 200)];
    const winnerBody = (await answers.find((r) => r.status === 200)!.json()) as { balance_usd: string; credited_usd: string };
    expect(winnerBody.credited_usd).toBe('3');
    const ledger = await (await getDb()).ledgerEntry.findMany({ where: { reference: { startsWith: 'redeem:' }, userId: { in: users.map((u) => u.userId) } } });
    expect(ledger).toHaveLength(1);
    expect(ledger[0].userId).toBe(winner.userId);

    // Lower case and without dashes is the same code; used now.
    const again = await call(gw.url, winner.cookie, 'POST', '/api/payment/redeem', { code: code.toLowerCase().replace(/-/g, '') });
    expect(again.status).toBe(409);
    const unknown = await call(gw.url, winner.cookie, 'POST', '/api/payment/redeem', { code: 'GW-00000-00000-00000-00000' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/not valid/);
    expect((await call(gw.url, null, 'POST', '/api/payment/redeem', { code })).status).toBe(401);

    const db = await getDb();
    await db.redemptionCode.updateMany({ where: { batchId: batch.batchId, redeemedAt: null }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await call(gw.url, winner.cookie, 'POST', '/api/payment/redeem', { code: batch.codes[1].code });
    expect(expired.status).toBe(400);
    expect(((await expired.json()) as { error: { message: string } }).error.message).toMatch(/expired/);

    const detail = (await (await call(gw.url, admin.cookie, 'GET', `/api/admin/codes/${batch.batchId}`)).json()) as {
      data: { redeemedByEmail: string | null }[];
    };
    expect(detail.data.map((c) => c.redeemedByEmail)).toEqual([winner.email, null]);
  });

  it('redemption is rate limited per account', async () => {
    const user = await register(gw.url);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push((await call(gw.url, user.cookie, 'POST', '/api/payment/redeem', { code: `GW-${'1'.repeat(19)}${i % 10}` })).status);
    expect(statuses.slice(0, 10).every((s) => s === 404)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
  });

  it('the overview sums revenue and spend', async () => {
    const res = await call(gw.url, admin.cookie, 'GET', '/api/admin/overview');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      windows: { label: string; requests: number; revenueUsd: string; spendUsd: string; spendCny: string }[];
      channels: unknown[];
    };
    expect(body.windows.map((w) => w.label)).toEqual(['Today', '7 days', '30 days']);
    expect(body.windows[0].requests).toBeGreaterThan(0);
    expect(Number(body.windows[0].revenueUsd)).toBeGreaterThanOrEqual(3);
    expect(body.channels).toHaveLength(2);
  });
});

describe('logs and announcements', { timeout: 60_000 }, () => {
  it("lists every account's requests with filters, and exports them as CSV", async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    fake1.reset();
    expect((await chat(gw.url, acct.apiKey)).status).toBe(200);
    const rows = await waitFor(async () => {
      const res = await call(gw.url, admin.cookie, 'GET', `/api/admin/logs?account=${encodeURIComponent(acct.email)}`);
      const body = (await res.json()) as { data: { email: string; channel: string; costUsd: string }[] };
      return body.data.length === 1 ? body.data : null;
    }, 10_000);
    expect(rows[0]).toMatchObject({ email: acct.email, channel: expect.stringMatching(/^adm-openai-[12]$/) });
    expect(Number(rows[0].costUsd)).toBeGreaterThan(0);
    const other = rows[0].channel === 'adm-openai-1' ? 'adm-openai-2' : 'adm-openai-1';
    const byChannel = (await (await call(gw.url, admin.cookie, 'GET', `/api/admin/logs?account=${acct.userId}&channel=${other}`)).json()) as {
      data: unknown[];
    };
    expect(byChannel.data).toHaveLength(0);
    const sameChannel = (await (await call(gw.url, admin.cookie, 'GET', `/api/admin/logs?account=${acct.userId}&channel=${rows[0].channel}`)).json()) as {
      data: unknown[];
    };
    expect(sameChannel.data).toHaveLength(1);
    const noFallback = (await (await call(gw.url, admin.cookie, 'GET', `/api/admin/logs?account=${acct.userId}&fallback=0&status=ok`)).json()) as {
      data: unknown[];
    };
    expect(noFallback.data).toHaveLength(1);
    expect((await call(gw.url, admin.cookie, 'GET', '/api/admin/logs?from=2026-13-01')).status).toBe(400);
    expect((await call(gw.url, admin.cookie, 'GET', '/api/admin/logs?fallback=maybe')).status).toBe(400);
    const csv = await call(gw.url, admin.cookie, 'GET', `/api/admin/logs/export?account=${acct.userId}`);
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    const lines = (await csv.text()).trim().split('\n');
    expect(lines[0]).toMatch(/^account_id,account_email,id,/);
    // The row, then the totals row (issue 45).
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(acct.email);
    expect(lines[2]).toMatch(/^,,total,1 requests,/);
    const user = await register(gw.url);
    expect((await call(gw.url, user.cookie, 'GET', '/api/admin/logs/export')).status).toBe(403);
  });

  it('an announcement shows on every dashboard until it is taken down', async () => {
    const user = await register(gw.url);
    const posted = await call(gw.url, admin.cookie, 'POST', '/api/admin/announcements', { message: 'Maintenance Sunday 02:00 UTC', level: 'warning' });
    expect(posted.status).toBe(201);
    expect(await (await fetch(`${gw2.url}/dashboard`, { headers: { cookie: user.cookie } })).text()).toContain('Maintenance Sunday 02:00 UTC');
    expect((await call(gw.url, admin.cookie, 'POST', '/api/admin/announcements', { message: '' })).status).toBe(400);
    expect((await call(gw.url, admin.cookie, 'DELETE', '/api/admin/announcements')).status).toBe(200);
    expect(await (await fetch(`${gw.url}/dashboard`, { headers: { cookie: user.cookie } })).text()).not.toContain('Maintenance Sunday');
    const audit = await (await getDb()).auditLog.findMany({ where: { targetType: 'announcement' }, orderBy: { id: 'asc' } });
    expect(audit.map((a) => a.action)).toEqual(['announcement.post', 'announcement.clear']);
  });
});

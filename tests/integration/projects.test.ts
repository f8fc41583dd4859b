// Projects, member budgets and spend by member and project (issue 41 items 4 and 7,
// docs/decisions/056) against the built server, two instances sharing Redis and fake upstreams:
// a project's model allowlist and monthly budget refuse requests of its keys (403/402 in the same
// shapes as a key's), a member's monthly budget covers every key they made and is exact under
// overlapping requests on two instances, the usage API and CSV exports group spend by member and
// project, and an organization's tier limit is shared by all its members' keys.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { pico } from '../support/money';
import { creditBalance } from '@/lib/billing/ledger';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/gateway/runtime';

let up: FakeUpstream;
let gwA: RunningGateway;
let gwB: RunningGateway;
/** The account API, behind a "proxy" (each sign-in from an address of its own). */
let gwApi: RunningGateway;

/** Replies to a message whose content is "slow" after 1.5 s: requests overlap. */
const SLOW_MS = 1500;

interface OpenAIError {
  error: { message: string; type: string; param: unknown; code: string };
}
type Person = TestAccount & { cookie: string };

let ipSeq = 0;
async function signIn(a: TestAccount): Promise<Person> {
  const ip = `198.19.${Math.floor(ipSeq / 250) % 250}.${(ipSeq++ % 250) + 1}`;
  const res = await fetch(`${gwApi.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gwApi.url, 'x-forwarded-for': ip },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return {
    ...a,
    cookie: res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
  };
}

function api(who: { cookie: string }, method: string, path: string, body?: unknown, orgId?: string): Promise<Response> {
  return fetch(`${gwApi.url}${path}`, {
    method,
    headers: {
      cookie: who.cookie,
      origin: gwApi.url,
      ...(orgId ? { 'x-organization-id': orgId } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok<T>(res: Promise<Response>, status = 200): Promise<T> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const chatBody = (model = 'deepseek-chat', content = 'Hi', extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });

function chat(gw: RunningGateway, apiKey: string, body: unknown = chatBody()): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, code: string): Promise<OpenAIError['error']> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as OpenAIError;
  expect(body.error.code, text).toBe(code);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return body.error;
}

const DEEPSEEK_IN = 270_000n; // pico-USD per token
const DEEPSEEK_OUT = 1_100_000n;
const MAX_TOKENS = 1000;
/** The reservation of a deepseek-chat request: the prompt bound (body bytes / 2) and max_tokens. */
const reservationOf = (body: unknown): bigint => BigInt(Math.ceil(JSON.stringify(body).length / 2)) * DEEPSEEK_IN + BigInt(MAX_TOKENS) * DEEPSEEK_OUT;
const usd = (p: bigint) => `${p / 10n ** 12n}.${(p % 10n ** 12n).toString().padStart(12, '0')}`;

/** An organization made by `owner` through the API, with $50 on its wallet and `members` as developers. */
async function organization(owner: Person, members: Person[]): Promise<string> {
  const org = await ok<{ id: string }>(api(owner, 'POST', '/api/orgs', { name: `Acme ${ipSeq}` }), 201);
  await creditBalance(org.id, 'admin_credit', 50_000_000_000_000n, { note: 'test' });
  const db = await getDb();
  // Pro: 8 concurrent requests (free allows 2), so only budgets refuse the overlapping ones.
  await db.user.update({ where: { id: org.id }, data: { tier: 'pro' } });
  // Invitations are organizations.test.ts's subject: here the members are written directly.
  for (const m of members) await db.membership.create({ data: { orgId: org.id, userId: m.userId, role: 'developer' } });
  return org.id;
}

interface KeyJson {
  id: string;
  key: string;
  project_id: string | null;
  created_by: string | null;
}

/** Sums what the successful replies cost, and drains every body. */
async function settle(results: Response[]): Promise<bigint> {
  let charged = 0n;
  for (const x of results) {
    if (x.status === 200) charged += pico(x.headers.get('x-service-cost-usd')!);
    if (!x.bodyUsed) await x.arrayBuffer();
  }
  return charged;
}

let owner: Person;
let devA: Person;
let devB: Person;

beforeAll(async () => {
  up = await startFakeUpstream({ faultFor: (req) => (req.body.includes('"slow"') ? { type: 'delay', ms: SLOW_MS } : undefined) });
  // gwA and gwB refuse what a budget cannot cover at its largest (the reservation is what is tested).
  const config = testConfig({ openaiUrls: [up.url], overrides: { clamp_output_to_budget: false } });
  [gwA, gwB, gwApi] = await Promise.all([startGateway({ config }), startGateway({ config }), startGateway({ config, env: { TRUST_PROXY: '1' } })]);
  [owner, devA, devB] = await Promise.all([
    createAccount({ tier: 'pro' }).then(signIn),
    createAccount({ tier: 'free' }).then(signIn),
    createAccount({ tier: 'free' }).then(signIn),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([gwA?.stop(), gwB?.stop(), gwApi?.stop()]);
  await up?.close();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

beforeEach(() => up.reset());

describe('projects', { timeout: 90_000 }, () => {
  it('API: owners and admins manage, developers read and put their own keys in one; bad input is a 400 naming the field', async () => {
    const orgId = await organization(owner, [devA]);
    const project = await ok<{ id: string; name: string; models: string[]; monthly_budget_usd: string | null }>(
      api(owner, 'POST', '/api/projects', { name: 'Search', models: ['deepseek-chat'], monthly_budget_usd: '12.5' }, orgId),
      201,
    );
    expect(project).toMatchObject({ name: 'Search', models: ['deepseek-chat'], monthly_budget_usd: '12.5' });

    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'x', models: ['no-such-model'] }, 'models'],
      [{ name: 'x', monthly_budget_usd: -1 }, 'monthly_budget_usd'],
    ] as const) {
      const err = await ok<OpenAIError>(api(owner, 'POST', '/api/projects', body, orgId), 400);
      expect(err.error).toMatchObject({ code: 'invalid_request', param: field });
    }

    // A developer reads the projects but may not make or change one (403, nothing changed).
    const listed = await ok<{ data: { id: string }[] }>(api(devA, 'GET', '/api/projects', undefined, orgId));
    expect(listed.data.map((p) => p.id)).toEqual([project.id]);
    const refused = await ok<OpenAIError>(api(devA, 'POST', '/api/projects', { name: 'Mine' }, orgId), 403);
    expect(refused.error.code).toBe('forbidden');
    expect((await api(devA, 'PATCH', `/api/projects/${project.id}`, { name: 'Renamed' }, orgId)).status).toBe(403);
    expect((await ok<{ data: { name: string }[] }>(api(owner, 'GET', '/api/projects', undefined, orgId))).data[0]!.name).toBe('Search');

    // Their own key goes in the project, on creation and by edit; another account's project is refused.
    const key = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'dev', project_id: project.id }, orgId), 201);
    expect(key.project_id).toBe(project.id);
    const elsewhere = await ok<{ id: string }>(api(owner, 'POST', '/api/projects', { name: 'Personal' }), 201);
    const wrong = await ok<OpenAIError>(api(devA, 'POST', '/api/keys', { name: 'x', project_id: elsewhere.id }, orgId), 400);
    expect(wrong.error).toMatchObject({ code: 'invalid_request', param: 'project_id' });
    expect((await ok<OpenAIError>(api(devA, 'PATCH', `/api/keys/${key.id}`, { project_id: 'nope' }, orgId), 400)).error.param).toBe('project_id');
    const out = await ok<KeyJson>(api(devA, 'PATCH', `/api/keys/${key.id}`, { project_id: null }, orgId));
    expect(out.project_id).toBeNull();

    // Deleting a project takes its keys out of it.
    await ok(api(devA, 'PATCH', `/api/keys/${key.id}`, { project_id: project.id }, orgId));
    await ok(api(owner, 'DELETE', `/api/projects/${project.id}`, undefined, orgId));
    const keys = await ok<{ data: KeyJson[] }>(api(devA, 'GET', '/api/keys', undefined, orgId));
    expect(keys.data.find((k) => k.id === key.id)?.project_id).toBeNull();
  });

  it("a project's allowlist refuses other models (403 naming the project) and its monthly budget is exact across two instances (402 naming it)", async () => {
    const orgId = await organization(owner, [devA]);
    const body = chatBody('deepseek-chat', 'slow', { max_tokens: MAX_TOKENS });
    const r = reservationOf(body);
    // Room for 3.5 reservations: exactly 3 of 8 overlapping requests fit.
    const project = await ok<{ id: string }>(
      api(owner, 'POST', '/api/projects', { name: 'Chatbot', models: ['deepseek-chat'], monthly_budget_usd: usd((r * 7n) / 2n) }, orgId),
      201,
    );
    // Two keys of two people in the project: the budget is the project's, whoever's key spends.
    const k1 = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'a', project_id: project.id }, orgId), 201);
    const k2 = await ok<KeyJson>(api(owner, 'POST', '/api/keys', { name: 'b', project_id: project.id }, orgId), 201);

    const denied = await expectError(await chat(gwA, k1.key, chatBody('gpt-4o-mini')), 403, 'model_not_allowed');
    expect(denied.message).toContain('project "Chatbot"');
    expect(denied.message).toContain('"gpt-4o-mini"');
    expect(denied.type).toBe('permission_error');
    const models = (await (await fetch(`${gwB.url}/v1/models`, { headers: { authorization: `Bearer ${k2.key}` } })).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['deepseek-chat']);

    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 ? gwB : gwA, i % 4 < 2 ? k1.key : k2.key, body)));
    const statuses = results.map((x) => x.status);
    // Exactly 3 admitted, 5 refused by the budget. An admitted one may still fail upstream on a busy
    // machine (a 5xx after its reservation was taken): it counted against the budget all the same.
    expect(
      statuses.filter((s) => s === 402),
      String(statuses),
    ).toHaveLength(5);
    expect(statuses.filter((s) => s === 200).length, String(statuses)).toBeGreaterThan(0);
    const refusal = results.find((x) => x.status === 402)!;
    const err = await expectError(refusal, 402, 'key_budget_exceeded');
    expect(err.message).toContain('Project budget exceeded');
    expect(err.message).toContain('"Chatbot"');
    const charged = await settle(results);
    expect(charged).toBeGreaterThan(0n);

    // The project's spend this month, as the API lists it once the rows are written.
    const listed = await waitFor(async () => {
      const p = (await ok<{ data: { id: string; spend_this_month_usd: string; keys: number }[] }>(api(owner, 'GET', '/api/projects', undefined, orgId)))
        .data[0]!;
      return pico(p.spend_this_month_usd) === charged ? p : null;
    }, 10_000);
    expect(listed.keys).toBe(2);
  });
});

describe('member budgets', { timeout: 90_000 }, () => {
  it('cover every key the member made, exact under overlapping requests on two instances (402 naming the member); raising it holds at once', async () => {
    const orgId = await organization(owner, [devA, devB]);
    const body = chatBody('deepseek-chat', 'slow', { max_tokens: MAX_TOKENS });
    const r = reservationOf(body);
    const set = await ok<{ monthly_budget_usd: string }>(
      api(owner, 'PATCH', `/api/orgs/${orgId}/members/${devB.userId}`, { monthly_budget_usd: usd((r * 7n) / 2n) }),
    );
    expect(pico(set.monthly_budget_usd)).toBe((r * 7n) / 2n);
    // A developer may not set budgets.
    expect((await api(devA, 'PATCH', `/api/orgs/${orgId}/members/${devB.userId}`, { monthly_budget_usd: '1000' })).status).toBe(403);
    const b1 = await ok<KeyJson>(api(devB, 'POST', '/api/keys', { name: 'b1' }, orgId), 201);
    const b2 = await ok<KeyJson>(api(devB, 'POST', '/api/keys', { name: 'b2' }, orgId), 201);
    const a1 = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'a1' }, orgId), 201);
    expect(b1.created_by).toBe(devB.userId);

    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 ? gwB : gwA, i % 4 < 2 ? b1.key : b2.key, body)));
    const statuses = results.map((x) => x.status);
    // Exactly 3 admitted, 5 refused by the budget. An admitted one may still fail upstream on a busy
    // machine (a 5xx after its reservation was taken): it counted against the budget all the same.
    expect(
      statuses.filter((s) => s === 402),
      String(statuses),
    ).toHaveLength(5);
    expect(statuses.filter((s) => s === 200).length, String(statuses)).toBeGreaterThan(0);
    const err = await expectError(
      results.find((x) => x.status === 402)!,
      402,
      'key_budget_exceeded',
    );
    expect(err.message).toContain('Member budget exceeded');
    expect(err.message).toContain(devB.email);
    const chargedB = await settle(results);

    // The other member's keys are not held by it.
    const other = await chat(gwA, a1.key, body);
    expect(other.status).toBe(200);
    const chargedA = await settle([other]);

    // Raised: the next request on either instance is served (the budget is read again on every instance).
    await ok(api(owner, 'PATCH', `/api/orgs/${orgId}/members/${devB.userId}`, { monthly_budget_usd: usd(r * 10n) }));
    const again = await waitFor(async () => {
      const res = await chat(gwB, b2.key, chatBody('deepseek-chat', 'Hi', { max_tokens: MAX_TOKENS }));
      if (res.status === 200) return res;
      await res.arrayBuffer();
      return null;
    }, 5_000);
    const chargedB2 = chargedB + (await settle([again]));

    // Usage by member and by project (JSON and CSV), once the log rows are written.
    const members = await waitFor(async () => {
      const report = await ok<{ group_by: string; groups: { key: string; label: string; spend_usd: string }[] }>(
        api(owner, 'GET', '/api/usage?group=member', undefined, orgId),
      );
      const b = report.groups.find((g) => g.key === devB.userId);
      return b && pico(b.spend_usd) === chargedB2 ? report : null;
    }, 10_000);
    expect(members.group_by).toBe('member');
    expect(members.groups.find((g) => g.key === devB.userId)?.label).toBe(devB.email);
    expect(pico(members.groups.find((g) => g.key === devA.userId)!.spend_usd)).toBe(chargedA);
    // In a viewer's zone the report reads the request log itself: its rows carry the member.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const zoned = await ok<{ time_zone: string; groups: { key: string; spend_usd: string }[] }>(
      api(owner, 'GET', `/api/usage?group=member&tz=Asia/Shanghai&from=${day(-1)}&to=${day(1)}`, undefined, orgId),
    );
    expect(zoned.time_zone).toBe('Asia/Shanghai');
    expect(pico(zoned.groups.find((g) => g.key === devB.userId)!.spend_usd)).toBe(chargedB2);
    const csv = await (await api(owner, 'GET', '/api/usage/export?group_by=member', undefined, orgId)).text();
    expect(csv).toContain(devB.email);
    const logs = (await (await api(owner, 'GET', '/api/logs/export', undefined, orgId)).text()).trim().split(/\r?\n/);
    const header = logs[0]!.split(',');
    expect(header.slice(-4)).toEqual(['member_id', 'member', 'project_id', 'project']);
    const row = logs.find((l) => l.includes(devA.email))!.split(',');
    expect(row[header.indexOf('member_id')]).toBe(devA.userId);
  });

  it('usage by project names each project; requests without one are "No project"', async () => {
    const orgId = await organization(owner, [devA]);
    const p = await ok<{ id: string }>(api(owner, 'POST', '/api/projects', { name: 'Reports' }, orgId), 201);
    const inside = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'in', project_id: p.id }, orgId), 201);
    const outside = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'out' }, orgId), 201);
    const [x, y] = await Promise.all([chat(gwA, inside.key), chat(gwB, outside.key)]);
    const [cx, cy] = [await settle([x]), await settle([y])];
    const report = await waitFor(async () => {
      const rep = await ok<{ groups: { key: string; label: string; spend_usd: string }[] }>(api(owner, 'GET', '/api/usage?group_by=project', undefined, orgId));
      return rep.groups.length === 2 ? rep : null;
    }, 10_000);
    expect(report.groups.find((g) => g.key === p.id)).toMatchObject({ label: 'Reports' });
    expect(pico(report.groups.find((g) => g.key === p.id)!.spend_usd)).toBe(cx);
    expect(pico(report.groups.find((g) => g.key === '(none)')!.spend_usd)).toBe(cy);
    expect(report.groups.find((g) => g.key === '(none)')!.label).toBe('No project');
    const csv = await (await api(owner, 'GET', '/api/usage/export?group_by=project', undefined, orgId)).text();
    expect(csv.split('\n')[0]).toContain('group_label');
    expect(csv).toContain('Reports');
    const logs = await (await api(owner, 'GET', '/api/logs/export', undefined, orgId)).text();
    expect(logs).toContain(`${p.id},Reports`);
    expect((await api(owner, 'GET', '/api/usage?group_by=colour', undefined, orgId)).status).toBe(400);
  });
});

describe('organization limits', { timeout: 90_000 }, () => {
  it("two members' keys share the organization's requests per minute across two instances; a key's own higher limit does not widen it", async () => {
    const orgId = await organization(owner, [devA, devB]);
    const db = await getDb();
    await db.user.update({ where: { id: orgId }, data: { limits: { rpm: 4 } } });
    const a = await ok<KeyJson>(api(devA, 'POST', '/api/keys', { name: 'a', rpm: 100 }, orgId), 201);
    const b = await ok<KeyJson>(api(devB, 'POST', '/api/keys', { name: 'b' }, orgId), 201);
    const results: Response[] = [];
    for (let i = 0; i < 6; i++) results.push(await chat(i % 2 ? gwB : gwA, i % 3 ? a.key : b.key));
    const statuses = results.map((x) => x.status);
    expect(
      statuses.filter((s) => s === 200),
      String(statuses),
    ).toHaveLength(4);
    const refused = results.find((x) => x.status === 429)!;
    const err = await expectError(refused, 429, 'rate_limit_exceeded');
    expect(err.message).toContain('4 requests per minute');
    await settle(results);
  });
});

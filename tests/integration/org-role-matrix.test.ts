// The role matrix of organizations (issue 41 item 2, decision 054) against the built server: for each
// role and each account or organization action, one table says allowed or refused. Refused is 403 in
// the account API envelope with its code, and nothing in the organization changed (its state is read
// before and after). Every case gets a fresh organization, so an allowed destructive action (remove,
// transfer, delete) cannot hide a later case's refusal.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { createAccount, signIn, type TestAccount } from '../support/accounts';
import { creditBalance } from '@/lib/billing/ledger';
import { createKeyWithControls } from '@/lib/keys/queries';
import { getDb } from '@/lib/db';
import type { OrgRole } from '@/lib/orgs/roles';

type Role = OrgRole;
const ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'billing'];

interface Fixture {
  org: string;
  /** A key the acting member created, and one the owner created. */
  ownKey: string;
  otherKey: string;
  /** A developer member other than the actor (the target of role change, removal, transfer). */
  other: string;
}

interface Case {
  name: string;
  allowed: readonly Role[];
  /** Path and body may use the fixture; a developer's own-key refusals are `org.own_keys_only`. */
  call: (f: Fixture) => { method: string; path: string; body?: unknown };
  /** Allowed means 2xx, or where the test deployment cannot complete the action, its own answer (code). */
  answer?: string;
}

const O: Role = 'owner';
const A: Role = 'admin';
const D: Role = 'developer';
const B: Role = 'billing';

// One table: the action, the roles that may do it, the call.
const TABLE: Case[] = [
  { name: 'keys: create', allowed: [O, A, D], call: () => ({ method: 'POST', path: '/api/keys', body: { name: 'matrix' } }) },
  { name: 'keys: list', allowed: [O, A, D], call: () => ({ method: 'GET', path: '/api/keys' }) },
  { name: 'keys: edit own', allowed: [O, A, D], call: (f) => ({ method: 'PATCH', path: `/api/keys/${f.ownKey}`, body: { name: 'renamed' } }) },
  { name: "keys: edit another's", allowed: [O, A], call: (f) => ({ method: 'PATCH', path: `/api/keys/${f.otherKey}`, body: { name: 'renamed' } }) },
  { name: 'keys: delete own', allowed: [O, A, D], call: (f) => ({ method: 'DELETE', path: `/api/keys/${f.ownKey}` }) },
  { name: "keys: delete another's", allowed: [O, A], call: (f) => ({ method: 'DELETE', path: `/api/keys/${f.otherKey}` }) },
  { name: 'logs: all keys', allowed: [O, A], call: () => ({ method: 'GET', path: '/api/logs' }) },
  { name: 'logs: own key', allowed: [O, A, D], call: (f) => ({ method: 'GET', path: `/api/logs?key=${f.ownKey}` }) },
  { name: "logs: another's key", allowed: [O, A], call: (f) => ({ method: 'GET', path: `/api/logs?key=${f.otherKey}` }) },
  { name: 'usage', allowed: [O, A, B], call: () => ({ method: 'GET', path: '/api/usage' }) },
  { name: 'ledger', allowed: [O, A, B], call: () => ({ method: 'GET', path: '/api/ledger' }) },
  // No payment provider in the test: allowed reaches the action and gets its own answer, never 403.
  {
    name: 'recharge',
    allowed: [O, B],
    answer: 'payments_not_configured',
    call: () => ({ method: 'POST', path: '/api/payment/recharge', body: { amount: 10, currency: 'USD' } }),
  },
  {
    name: 'redeem',
    allowed: [O, B],
    answer: 'redeem.invalid',
    call: () => ({ method: 'POST', path: '/api/payment/redeem', body: { code: 'NO-SUCH-CODE-1234' } }),
  },
  { name: 'statements', allowed: [O, A, B], call: () => ({ method: 'GET', path: '/api/statements/2026-11.json' }) },
  { name: 'playground token', allowed: [O, A, D], call: () => ({ method: 'POST', path: '/api/playground/token', body: {} }) },
  { name: 'alert settings: read', allowed: [O, A, B], call: () => ({ method: 'GET', path: '/api/alerts/settings' }) },
  { name: 'alert settings: save', allowed: [O, A], call: () => ({ method: 'PUT', path: '/api/alerts/settings', body: { enabled: true } }) },
  { name: 'members: list', allowed: [O, A, D, B], call: (f) => ({ method: 'GET', path: `/api/orgs/${f.org}/members` }) },
  {
    name: 'invite',
    allowed: [O, A],
    call: (f) => ({ method: 'POST', path: `/api/orgs/${f.org}/invitations`, body: { email: `m-${randomUUID()}@example.com`, role: 'developer' } }),
  },
  { name: 'invitations: list', allowed: [O, A], call: (f) => ({ method: 'GET', path: `/api/orgs/${f.org}/invitations` }) },
  { name: 'role change', allowed: [O, A], call: (f) => ({ method: 'PATCH', path: `/api/orgs/${f.org}/members/${f.other}`, body: { role: 'billing' } }) },
  { name: 'remove member', allowed: [O, A], call: (f) => ({ method: 'DELETE', path: `/api/orgs/${f.org}/members/${f.other}` }) },
  { name: 'rename', allowed: [O, A], call: (f) => ({ method: 'PATCH', path: `/api/orgs/${f.org}`, body: { name: 'Renamed' } }) },
  { name: 'spend by member', allowed: [O, A, B], call: (f) => ({ method: 'GET', path: `/api/orgs/${f.org}/usage` }) },
  { name: 'audit', allowed: [O, A], call: (f) => ({ method: 'GET', path: `/api/orgs/${f.org}/audit` }) },
  { name: 'transfer ownership', allowed: [O], call: (f) => ({ method: 'POST', path: `/api/orgs/${f.org}/transfer`, body: { user_id: f.other } }) },
  { name: 'delete organization', allowed: [O], call: (f) => ({ method: 'DELETE', path: `/api/orgs/${f.org}` }) },
];

let gw: RunningGateway;
let owner: TestAccount & { cookie: string };
const members = new Map<Role, TestAccount & { cookie: string }>();
let other: TestAccount;

/** A fresh organization where `actor` has `role` (the owner is `owner` unless the actor is), with keys and money. */
async function fixture(role: Role): Promise<Fixture> {
  const db = await getDb();
  const id = randomUUID();
  const actor = members.get(role)!;
  const theOwner = role === 'owner' ? actor : owner;
  await db.user.create({ data: { id, email: `org-${id}@organizations.invalid`, passwordHash: '!organization' } });
  await db.organization.create({ data: { id, name: 'Matrix' } });
  await db.membership.createMany({
    data: [
      { orgId: id, userId: theOwner.userId, role: 'owner' },
      ...(role === 'owner' ? [] : [{ orgId: id, userId: actor.userId, role }]),
      { orgId: id, userId: other.userId, role: 'developer' as const },
    ],
  });
  await creditBalance(id, 'admin_credit', 2_000_000_000_000n, { note: 'matrix' });
  const ownKey = await createKeyWithControls(id, { name: 'own' }, actor.userId);
  const otherKey = await createKeyWithControls(id, { name: 'owner key' }, theOwner === actor ? other.userId : theOwner.userId);
  return { org: id, ownKey: ownKey.id, otherKey: otherKey.id, other: other.userId };
}

/** Everything an action could change in the organization. */
async function state(org: string) {
  const db = await getDb();
  const [o, account, keys, memberships, invitations, ledger, alerts, audit] = await Promise.all([
    db.organization.findUnique({ where: { id: org } }),
    db.user.findUnique({ where: { id: org }, select: { balanceUsd: true, status: true, deletedAt: true } }),
    db.apiKey.findMany({ where: { userId: org }, orderBy: { id: 'asc' }, select: { id: true, name: true, revokedAt: true } }),
    db.membership.findMany({ where: { orgId: org }, orderBy: { userId: 'asc' }, select: { userId: true, role: true } }),
    db.invitation.count({ where: { orgId: org } }),
    db.ledgerEntry.count({ where: { userId: org } }),
    db.alertSettings.findUnique({ where: { userId: org } }),
    db.auditLog.count({ where: { targetType: 'organization', targetId: org } }),
  ]);
  return JSON.stringify({ o, account, keys, memberships, invitations, ledger, alerts, audit });
}

beforeAll(async () => {
  gw = await startGateway({ config: testConfig({ openaiUrls: ['http://127.0.0.1:9'] }), env: { TRUST_PROXY: '1' } });
  const login = async (a: TestAccount, n: number) => ({ ...a, cookie: await signIn(gw.url, a, `10.54.0.${n}`) });
  owner = await login(await createAccount({}), 1);
  for (const [i, role] of ROLES.entries()) members.set(role, role === 'owner' ? owner : await login(await createAccount({}), i + 2));
  other = await createAccount({});
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await (await getDb()).$disconnect();
});

const cases = ROLES.flatMap((role) => TABLE.map((c) => ({ role, ...c, allow: c.allowed.includes(role) })));

describe('organization role matrix', { timeout: 60_000 }, () => {
  it.each(cases)('$role: $name → allowed $allow', async ({ role, call, allow, answer }) => {
    const f = await fixture(role);
    const { method, path, body } = call(f);
    const before = await state(f.org);
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        cookie: members.get(role)!.cookie,
        origin: gw.url,
        'x-organization-id': f.org,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (allow) {
      if (answer === undefined) expect(res.status, text).toBeLessThan(300);
      else {
        const err = (JSON.parse(text) as { error: { code: string; message_code?: string } }).error;
        expect([err.code, err.message_code], text).toContain(answer);
      }
      return;
    }
    expect(res.status, text).toBe(403);
    const err = (JSON.parse(text) as { error: { code: string; message_code?: string; message: string } }).error;
    expect(err.code).toBe('forbidden');
    expect(['org.role_refused', 'org.own_keys_only', 'org.owner_only']).toContain(err.message_code);
    expect(err.message.length).toBeGreaterThan(0);
    expect(await state(f.org)).toBe(before);
  });
});

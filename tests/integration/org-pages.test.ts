// Dashboard pages act on the selected organization and check the role (decision 054), against the
// built server: with the switcher's cookie the billing and statements pages show the organization's
// money, not the person's; a role's refused page says so (en and zh-CN) and its nav leaves it out;
// buttons a role cannot use are not offered; a stale choice falls back to the personal account.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { createAccount, signIn, type TestAccount } from '../support/accounts';
import { creditBalance } from '@/lib/billing/ledger';
import { getDb } from '@/lib/db';
import type { OrgRole } from '@/lib/orgs/roles';

let gw: RunningGateway;
let org = '';
const people = new Map<OrgRole, TestAccount & { cookie: string }>();

beforeAll(async () => {
  gw = await startGateway({ config: testConfig({ openaiUrls: ['http://127.0.0.1:9'] }), env: { TRUST_PROXY: '1' } });
  const db = await getDb();
  org = randomUUID();
  await db.user.create({ data: { id: org, email: `org-${org}@organizations.invalid`, passwordHash: '!organization' } });
  await db.organization.create({ data: { id: org, name: 'Pages Inc' } });
  await creditBalance(org, 'admin_credit', 45_670_000_000_000n, { note: 'org pages' }); // $45.67
  for (const [i, role] of (['owner', 'admin', 'developer', 'billing'] as const).entries()) {
    const a = await createAccount({ balanceUsd: '1.23' });
    await db.membership.create({ data: { orgId: org, userId: a.userId, role } });
    people.set(role, { ...a, cookie: await signIn(gw.url, a, `10.54.2.${i + 1}`) });
  }
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await (await getDb()).$disconnect();
});

async function page(role: OrgRole, path: string, extraCookie = `gw_org=${org}`): Promise<string> {
  const res = await fetch(`${gw.url}${path}`, { headers: { cookie: `${people.get(role)!.cookie}; ${extraCookie}` } });
  expect(res.status, path).toBe(200);
  return res.text();
}

describe('dashboard pages in an organization', { timeout: 60_000 }, () => {
  it('billing and statements show the selected organization’s money, not the person’s', async () => {
    const billing = await page('owner', '/dashboard/billing');
    expect(billing).toContain('$45.67');
    expect(billing).not.toContain('$1.23');
    const statements = await page('owner', '/dashboard/billing/statements');
    expect(statements).toContain('45.67');
    expect(statements).not.toContain('1.23');
    // The person's own account when nothing (or something stale) is chosen.
    expect(await page('owner', '/dashboard/billing', '')).toContain('$1.23');
    expect(await page('owner', '/dashboard/billing', `gw_org=${randomUUID()}`)).toContain('$1.23');
  });

  it('a refused page says the role cannot see it, and the nav leaves it out', async () => {
    const usage = await page('developer', '/dashboard/usage');
    expect(usage).toContain('data-testid="role-refused"');
    expect(usage).toContain('Your role cannot see this page');
    expect(usage).not.toContain('href="/dashboard/usage"');
    expect(usage).toContain('href="/dashboard/keys"');
    const zh = await page('developer', '/dashboard/usage', `gw_org=${org}; lang=zh-CN`);
    expect(zh).toContain('你的角色无权查看此页面');
    const keys = await page('billing', '/dashboard/keys');
    expect(keys).toContain('data-testid="role-refused"');
    expect(keys).not.toContain('href="/dashboard/keys"');
    expect(await page('developer', '/dashboard/keys')).not.toContain('data-testid="role-refused"');
    // In a personal account its person is the owner: nothing is refused.
    expect(await page('developer', '/dashboard/usage', '')).not.toContain('data-testid="role-refused"');
  });

  it('offers only the actions the role may take', async () => {
    const adminBilling = await page('admin', '/dashboard/billing');
    expect(adminBilling).toContain('data-testid="billing-role-note"');
    const billingBilling = await page('billing', '/dashboard/billing');
    expect(billingBilling).not.toContain('data-testid="billing-role-note"');
    expect(await page('billing', '/dashboard/alerts')).toContain('data-testid="alerts-role-note"');
    expect(await page('admin', '/dashboard/alerts')).not.toContain('data-testid="alerts-role-note"');
    // The organization page: owners see transfer and delete, admins invite, developers only the members.
    // (A rename first, so the audit log has a row to show.)
    const renamed = await fetch(`${gw.url}/api/orgs/${org}`, {
      method: 'PATCH',
      headers: { cookie: people.get('owner')!.cookie, origin: gw.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Pages Inc.' }),
    });
    expect(renamed.status).toBe(200);
    const ownerOrg = await page('owner', '/dashboard/organization');
    expect(ownerOrg).toContain('data-testid="org-delete"');
    expect(ownerOrg).toContain('data-testid="org-audit-card"');
    expect(ownerOrg).toContain('data-testid="org-audit-row"');
    expect(ownerOrg).not.toContain('data-testid="org-leave"');
    const adminOrg = await page('admin', '/dashboard/organization');
    expect(adminOrg).toContain('data-testid="invite-submit"');
    expect(adminOrg).not.toContain('data-testid="org-delete"');
    const devOrg = await page('developer', '/dashboard/organization');
    expect(devOrg).toContain('data-testid="org-members"');
    expect(devOrg).not.toContain('data-testid="invite-submit"');
    expect(devOrg).not.toContain('data-testid="org-audit-card"');
    expect(devOrg).toContain('data-testid="org-leave"');
    expect(devOrg).not.toContain('data-testid="member-spend"');
  });
});

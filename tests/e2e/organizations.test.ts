// Organizations in a real browser (issue 41 item 8, decision 054): an owner signs up, creates an
// organization with the switcher, invites a developer (the link is shown: no mail is configured);
// the developer signs up through the link, comes back to it and accepts, creates a key in the
// organization and spends through /v1; the owner sees that spend by member on the organization page.
// On a phone the switcher and the members page fit; the pages are axe-clean.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, signUp } from '../support/browser';
import { closeBrowserTest } from '../support/teardown';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { axeProblems } from '../support/axe';
import { creditBalance } from '@/lib/billing/ledger';
import { getDb } from '@/lib/db';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let owner: Page;
let dev: Page;
const suffix = randomBytes(4).toString('hex');
const ownerEmail = `owner-${suffix}@example.com`;
const devEmail = `dev-${suffix}@example.com`;
const password = 'sturdy-pass-54';
const orgName = `Acme ${suffix}`;
let orgId = '';
let link = '';
let cost = 0;

async function expectAxeClean(page: Page, name: string) {
  expect(await axeProblems(page), name).toEqual([]);
}

async function fitsPhone(page: Page, url: string, name: string) {
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.goto(url);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${name} is ${width} px wide`).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(shots, `54-phone-${name}.png`), fullPage: true });
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { TRUST_PROXY: '1' } });
  browser = await launchChromium();
  owner = await openPage(browser, '10.54.1.1');
  dev = await openPage(browser, '10.54.1.2');
}, 120_000);

afterAll(() => closeBrowserTest({ browser, gw, fake }));

describe('organizations in the dashboard', { timeout: 90_000 }, () => {
  it('the owner signs up and creates an organization from the switcher', async () => {
    await signUp(owner, gw.url, ownerEmail, password);
    await owner.getByTestId('org-switcher').selectOption('__create');
    await owner.waitForURL(`${gw.url}/dashboard/organization/new`);
    await owner.fill('#new-org-name', orgName);
    await owner.getByTestId('org-create').click();
    await owner.waitForURL(`${gw.url}/dashboard/organization`);
    await owner.getByRole('heading', { name: orgName }).waitFor();
    const org = await (await getDb()).organization.findFirstOrThrow({ where: { name: orgName } });
    orgId = org.id;
    // The switcher now acts on the organization, and its wallet is the organization's.
    expect(await owner.getByTestId('org-switcher').inputValue()).toBe(orgId);
    await creditBalance(orgId, 'admin_credit', 5_000_000_000_000n, { note: 'e2e' }); // $5
    await expectAxeClean(owner, 'organization page');
  });

  it('invites a developer and is shown the link, since no mail is configured', async () => {
    await owner.fill('#invite-email', devEmail);
    await owner.selectOption('#invite-role', 'developer');
    await owner.getByTestId('invite-submit').click();
    link = (await owner.getByTestId('invite-link').textContent())!.trim();
    expect(link).toContain('/invite/');
    // The page reloads its data after the invitation: the pending list then holds it.
    await owner.getByTestId('org-invitation').filter({ hasText: devEmail }).waitFor();
    await owner.screenshot({ path: path.join(shots, '54-organization-invite.png'), fullPage: true });
    await expectAxeClean(owner, 'organization page with an invitation');
  });

  it('the developer signs up through the link, comes back to it and accepts', async () => {
    await dev.goto(link);
    await expect(dev.getByTestId('invite-offer').textContent()).resolves.toContain(devEmail);
    await expectAxeClean(dev, 'invitation page');
    await dev.getByTestId('invite-register').click();
    await dev.waitForURL(/\/register\?callbackUrl=/);
    expect(await dev.inputValue('#email')).toBe(devEmail);
    await dev.fill('#password', password);
    await dev.getByTestId('register-submit').click();
    await dev.waitForURL(/\/invite\//);
    await dev.getByTestId('invite-accept').click();
    await dev.waitForURL(`${gw.url}/dashboard`);
    await dev.getByTestId('org-switcher').waitFor();
    expect(await dev.getByTestId('org-switcher').inputValue()).toBe(orgId);
    // A developer's nav has keys and playground, not usage or billing; the usage page says why not.
    const nav = (await dev.getByRole('navigation', { name: 'Dashboard' }).textContent())!;
    expect(nav).toContain('Keys');
    expect(nav).not.toContain('Usage');
    expect(nav).not.toContain('Billing');
    await dev.goto(`${gw.url}/dashboard/usage`);
    await dev.getByTestId('role-refused').waitFor();
    await expectAxeClean(dev, 'role refused page');
    // The used link now says so.
    await dev.goto(link);
    await dev.getByTestId('invite-refused').waitFor();
    await expect(dev.getByTestId('invite-refused').textContent()).resolves.toContain('already used');
  });

  it('the developer creates a key in the organization and spends through /v1', async () => {
    await dev.goto(`${gw.url}/dashboard/keys`);
    await dev.getByTestId('key-name').fill('dev laptop');
    await dev.getByTestId('create-key').click();
    const apiKey = (await dev.getByTestId('new-key').textContent())!.trim();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    cost = Number(res.headers.get('x-service-cost-usd'));
    expect(cost).toBeGreaterThan(0);
    await res.arrayBuffer();
    const key = await (await getDb()).apiKey.findFirstOrThrow({ where: { name: 'dev laptop', userId: orgId } });
    expect(key.createdById).not.toBeNull();
  });

  it('the owner sees the spend by member on the members page, also on a phone', async () => {
    const deadline = Date.now() + 20_000;
    let shown = 0;
    // The daily rollup is written after the request settles: look again until it is there.
    while (Date.now() < deadline) {
      await owner.goto(`${gw.url}/dashboard/organization`);
      const text = (await owner.getByTestId('org-member').filter({ hasText: devEmail }).getByTestId('member-spend').textContent())!;
      shown = Number(text.replace('$', ''));
      if (shown > 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(shown).toBeCloseTo(cost, 6);
    const ownerSpend = (await owner.getByTestId('org-member').filter({ hasText: ownerEmail }).getByTestId('member-spend').textContent())!;
    expect(ownerSpend).toBe('$0.00');
    await owner.screenshot({ path: path.join(shots, '54-organization-members.png'), fullPage: true });
    await fitsPhone(owner, `${gw.url}/dashboard/organization`, 'organization');
    await fitsPhone(owner, `${gw.url}/dashboard/organization/new`, 'organization-new');
    await owner.setViewportSize({ width: 390, height: 844 });
    try {
      await owner.goto(`${gw.url}/dashboard`);
      expect(await owner.getByTestId('org-switcher').isVisible()).toBe(true);
    } finally {
      await owner.setViewportSize({ width: 1280, height: 900 });
    }
  });
});

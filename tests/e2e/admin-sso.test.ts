// The console's single sign-on page in a real browser on a 390x844 phone, in English and Chinese:
// the configured provider and its callback URL, no secret, a domain released through its button
// (after a confirmation), the page fitting the width and free of serious axe-core violations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { launchChromium, signIn } from '../support/browser';
import { axeProblems } from '../support/axe';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createOperator, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

const SECRET = `ghsecret-${randomBytes(8).toString('hex')}`;
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let operator: TestAccount;

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], overrides: { limits: { login_per_ip_per_minute: 10_000 } } }),
    env: { GITHUB_CLIENT_ID: 'gh-client-e2e', GITHUB_CLIENT_SECRET: SECRET },
  });
  operator = await createOperator();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

describe('single sign-on page', { timeout: 120_000 }, () => {
  it.each(['en-US', 'zh-CN'])('shows the providers and releases a domain on a phone (%s)', async (locale) => {
    const db = await getDb();
    const orgId = randomUUID();
    const domain = `sso-${randomBytes(4).toString('hex')}.test`;
    await db.user.create({ data: { id: orgId, email: `org-${orgId}@organizations.invalid`, passwordHash: '!organization' } });
    await db.organization.create({ data: { id: orgId, name: 'Phone Org' } });
    await db.ssoDomain.create({ data: { domain, orgId } });

    const ctx = await browser.newContext({ locale, viewport: { width: 390, height: 844 } });
    const p = await ctx.newPage();
    await signIn(p, gw.url, operator.email, operator.password);
    await p.goto(`${gw.url}/admin/sso`);
    const github = p.getByTestId('sso-provider-github');
    expect(await github.textContent()).toContain(`${gw.url}/api/auth/callback/github`);
    expect(await github.textContent()).toContain(locale === 'zh-CN' ? '已启用' : 'enabled');
    expect(await p.getByTestId('sso-provider-oidc').textContent()).toContain(locale === 'zh-CN' ? '未配置' : 'not configured');
    expect(await p.content()).not.toContain(SECRET);
    expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await axeProblems(p)).toEqual([]);

    p.once('dialog', (d) => void d.accept());
    await p.getByTestId(`release-sso-domain-${domain}`).click();
    await expect.poll(() => p.getByTestId(`sso-domain-${domain}`).count()).toBe(0);
    expect(await db.ssoDomain.findUnique({ where: { domain } })).toBeNull();
    await ctx.close();
  });
});

// Issue 44 item 5 in a real browser: the console's reconciliation page on a 390x844 phone, in
// English and Chinese: a provider export pasted and compared, its differences shown per day and
// model, the page still fitting the width and free of serious axe-core violations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { axeProblems } from '../support/axe';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let operator: TestAccount;
const PREFIX = `rce${randomBytes(3).toString('hex')}-`;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ channelPrefix: PREFIX, openaiUrls: [fake.url] }) });
  operator = await createAccount({ tier: 'pro', balanceUsd: '5' });
  const db = await getDb();
  await db.user.update({ where: { id: operator.userId }, data: { role: 'admin' } });
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  await waitFor(() => db.requestLog.findFirst({ where: { channel: `${PREFIX}openai-1` } }), 10_000);
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
});

describe('reconciliation page', { timeout: 120_000 }, () => {
  it.each(['en-US', 'zh-CN'])('compares a pasted OpenAI export on a phone (%s)', async (locale) => {
    const ctx = await browser.newContext({ locale, viewport: { width: 390, height: 844 } });
    const p = await ctx.newPage();
    await p.goto(`${gw.url}/login`);
    await p.fill('#email', operator.email);
    await p.fill('#password', operator.password);
    await p.getByTestId('login-submit').click();
    await p.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
    await p.goto(`${gw.url}/admin/reconciliation`);
    await expect.poll(() => p.getByTestId('reconcile-row').count()).toBeGreaterThan(0);
    // The export says 1,000 more output tokens than we recorded for today's gpt-4o-mini.
    const db = await getDb();
    const rows = await db.requestLog.findMany({ where: { channel: `${PREFIX}openai-1` } });
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
    const csv = `start_time_iso,model,input_tokens,input_cached_tokens,output_tokens\n${today}T00:00:00+00:00,gpt-4o-mini,${sum((r) => r.promptTokens + r.cacheReadTokens)},${sum((r) => r.cacheReadTokens)},${sum((r) => r.completionTokens) + 1000}\n`;
    await p.getByTestId('reconcile-csv-text').fill(csv);
    await p.selectOption('#reconcile-channel', `${PREFIX}openai-1`);
    await p.getByTestId('reconcile-compare').click();
    await p.getByTestId('reconcile-result').waitFor();
    await expect.poll(() => p.getByTestId('reconcile-diff').count()).toBe(1);
    expect(await p.getByTestId('reconcile-diff').textContent()).toContain('+1,000');
    expect(await p.getByTestId('reconcile-result').textContent()).toContain(locale === 'zh-CN' ? '不一致' : 'differ');
    expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(await axeProblems(p)).toEqual([]);

    // An export it cannot read: the error in the reader's language.
    await p.getByTestId('reconcile-csv-text').fill('date,amount\n2026-11-01,4.20\n');
    await p.getByTestId('reconcile-compare').click();
    await p.getByTestId('reconcile-error').waitFor();
    expect(await p.getByTestId('reconcile-error').textContent()).toContain(
      locale === 'zh-CN' ? '不是 OpenAI 或 Anthropic 的用量导出' : 'Not an OpenAI or Anthropic usage export',
    );
    await ctx.close();
  });
});

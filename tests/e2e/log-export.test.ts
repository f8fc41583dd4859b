// The operator console's Log export page in Debian's Chromium on a 390 px phone, in English and
// Chinese: the sink's status, a replay queued from the form and delivered, the download link built
// from the filters; no sideways scrolling and no serious axe-core violation. Screenshots in
// test-output/screenshots (log-export-*.png).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeProblems } from '../support/axe';
import { launchChromium, openPage, signIn } from '../support/browser';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { generateSigningSecret } from '@/lib/alerts/signing';
import { getDb } from '@/lib/db';

const shots = path.join(ROOT, 'test-output', 'screenshots');
let gw: RunningGateway;
let fake: FakeUpstream;
let receiver: http.Server;
let browser: Browser;
let page: Page;
let admin: TestAccount;
const replayed: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as { replay: boolean; rows: { id: string }[] };
      if (body.replay) replayed.push(...body.rows.map((r) => r.id));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  fake = await startFakeUpstream();
  const db = await getDb();
  await db.logExportState.deleteMany({});
  await db.logExportReplay.deleteMany({});
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  gw = await startGateway({
    config: testConfig({
      openaiUrls: [fake.url],
      channelPrefix: 'lxe-',
      overrides: { log_export: { url, secret: generateSigningSecret(), max_rows: 2, max_seconds: 1, settle_seconds: 0 } },
    }),
    env: { TRUST_PROXY: '1' },
  });
  admin = await createAccount({ balanceUsd: '5' });
  await db.user.update({ where: { id: admin.userId }, data: { role: 'admin' } });
  browser = await launchChromium();
  page = await openPage(browser, '10.45.9.1', { viewport: { width: 390, height: 844 } });
  await signIn(page, gw.url, admin.email, admin.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await fake?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('log export page', () => {
  it('queues a replay from the form on a phone, in English and Chinese, without sideways scrolling or axe violations', async () => {
    const before = new Date(Date.now() - 60_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      ids.push(res.headers.get('x-request-id')!);
      await res.text();
    }
    for (const [lang, title, done] of [
      ['en', 'Log export', 'done'],
      ['zh-CN', '日志导出', '已完成'],
    ] as const) {
      await page.context().addCookies([{ name: 'lang', value: lang, url: gw.url }]);
      await page.goto(`${gw.url}/admin/log-export`);
      await expect(page.locator('h1').first().textContent()).resolves.toContain(title);
      await expect(page.getByTestId('log-export-status').isVisible()).resolves.toBe(true);
      // datetime-local takes the viewer's clock: the browser and the test share this machine's zone.
      const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      await page.fill('#replay-from', local(before));
      await page.fill('#replay-to', local(new Date(Date.now() + 120_000)));
      await page.getByTestId('replay-start').click();
      await page
        .getByRole('status')
        .filter({ hasText: lang === 'en' ? 'Replay queued.' : '已加入重放队列。' })
        .waitFor();
      await waitFor(async () => (await (await getDb()).logExportReplay.count({ where: { status: { not: 'done' } } })) === 0, 20_000);
      await page.reload();
      await expect(page.getByTestId('replay-status').first().textContent()).resolves.toBe(done);
      await page.fill('#export-model', 'gpt-4o-mini');
      await page.selectOption('#export-format', 'jsonl');
      const href = await page.getByTestId('export-download').getAttribute('href');
      expect(href).toContain('format=jsonl');
      expect(href).toContain('model=gpt-4o-mini');
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(390);
      expect(await axeProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(shots, `log-export-${lang}-phone.png`), fullPage: true });
    }
    // The range holds these requests (and whatever else the shared test database logged in it).
    for (const id of ids) expect(replayed).toContain(id);
    // Two languages, two replays and two axe scans: beside a full suite and a busy core this takes far
    // longer than Vitest's default, as the other browser flows do.
  }, 120_000);
});

// The playground (#40 item 3) in a real browser against the production build: a new account, signed
// in and credited, picks a Claude model served by an Anthropic upstream, sends a system prompt and two
// turns streamed as they arrive, sees each turn's cost, the same figure as its row on the logs page
// (marked Playground), copies the exact request as curl with $GATEWAY_API_KEY for the key (never the
// session credential); bad parameters are named next to their field; it fits a 390 px phone, in zh-CN
// and in dark mode. No API key is created or pasted.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openPage, signUp } from '../support/browser';
import { closeBrowserTest } from '../support/teardown';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { getDb } from '@/lib/db';
import { creditBalance } from '@/lib/billing/ledger';
import { usdToPico } from '@/lib/money';

const shots = path.join(ROOT, 'test-output', 'screenshots');
const REPLY = 'Bonjour from a streamed reply in several small pieces.';
let gw: RunningGateway;
let fake: FakeUpstream;
let browser: Browser;
let page: Page;
const email = `pg-${Date.now()}@example.com`;
const password = 'sturdy-pass-42';
const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  // Each stream frame 120 ms apart: the reply takes about a second to arrive, word by word.
  fake = await startFakeUpstream({ chunkDelayMs: 120, reply: REPLY });
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url] }),
    env: { TRUST_PROXY: '1', NEXTAUTH_URL: '', PUBLIC_BASE_URL: '', STRIPE_SECRET_KEY: '' },
  });
  browser = await launchChromium();
  page = await openPage(browser, '10.77.40.30');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
}, 120_000);

afterAll(() => closeBrowserTest({ browser, gw, fake }));

/** Records every text the newest reply bubble shows, as the DOM changes. */
async function watchReplies(p: Page): Promise<void> {
  await p.evaluate(() => {
    const w = window as unknown as { seen: string[] };
    w.seen = [];
    new MutationObserver(() => {
      const replies = document.querySelectorAll('[data-testid="pg-reply"]');
      const text = replies[replies.length - 1]?.textContent ?? '';
      if (text && w.seen.at(-1) !== text) w.seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function send(p: Page, text: string, turn: number) {
  await p.getByTestId('pg-prompt').fill(text);
  await p.getByTestId('pg-send').click();
  await p.getByTestId('pg-turn-cost').nth(turn).waitFor({ timeout: 30_000 });
}

describe('the playground', { timeout: 120_000 }, () => {
  let costs: string[] = [];

  it('signs up and is credited', async () => {
    await signUp(page, gw.url, email, password);
    const user = await (await getDb()).user.findUniqueOrThrow({ where: { email } });
    await creditBalance(user.id, 'admin_credit', usdToPico('5'), { note: 'playground test' });
  });

  it('lists the Claude and OpenAI models of the tier, and names a bad parameter next to its field', async () => {
    await page.goto(`${gw.url}/dashboard/playground`);
    const options = await page.locator('[data-testid="pg-model"] option').allTextContents();
    expect(options).toEqual(expect.arrayContaining(['claude-sonnet-4-5', 'gpt-4o-mini']));
    const groups = await page.locator('[data-testid="pg-model"] optgroup').evaluateAll((els) => els.map((e) => e.getAttribute('label')));
    expect(groups).toContain('Claude (Anthropic)');
    expect(await page.getByTestId('pg-key').count()).toBe(0); // nothing to paste
    await page.getByTestId('pg-temperature').fill('7');
    await page.getByTestId('pg-tools').fill('[{"type": "function", "function": {}}]');
    await page.getByTestId('pg-send').click();
    await expect(page.getByTestId('pg-temperature-error').textContent()).resolves.toBe('Temperature must be a number from 0 to 2.');
    await expect(page.getByTestId('pg-tools-error').textContent()).resolves.toBe('Tool 1: the function needs a name of letters, digits, _ or - (up to 64).');
    await page.getByTestId('pg-tools').fill('{not json');
    await page.getByTestId('pg-send').click();
    await expect(page.getByTestId('pg-tools-error').textContent()).resolves.toBe('Tools must be valid JSON.');
    await expect(page.getByTestId('pg-turn-assistant').count()).resolves.toBe(0); // nothing was sent
    await page.getByTestId('pg-temperature').fill('0.3');
    await page.getByTestId('pg-tools').fill('');
  });

  it('streams two turns of a Claude model with a system prompt, each with its cost and latency', async () => {
    fake.reset();
    fake.setReply(REPLY);
    await page.getByTestId('pg-model').selectOption('claude-sonnet-4-5');
    await page.getByTestId('pg-system').fill('You answer in French.');
    await page.getByTestId('pg-max-tokens').fill('200');
    await watchReplies(page);
    await send(page, 'Say hello.', 0);
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    // Seen growing piece by piece before the whole reply: rendered as it arrived.
    expect(seen.at(-1)).toBe(REPLY);
    const partial = seen.filter((s) => s !== REPLY && REPLY.startsWith(s));
    expect(partial.length).toBeGreaterThanOrEqual(2);
    await send(page, 'And once more?', 1);
    await expect(page.getByTestId('pg-reply').allTextContents()).resolves.toEqual([REPLY, REPLY]);
    costs = await page.getByTestId('pg-turn-cost').allTextContents();
    for (const cost of costs) expect(cost).toMatch(/^\$0\.\d+$/);
    for (const latency of await page.getByTestId('pg-turn-latency').allTextContents()) expect(latency).toMatch(/^\d+ ms/);
    // The Anthropic upstream got the system prompt and the whole conversation, streamed.
    const calls = fake.requests.filter((r) => r.path === '/v1/messages');
    expect(calls).toHaveLength(2);
    const second = calls[1]!.json as {
      system: unknown;
      messages: { role: string; content: unknown }[];
      stream: boolean;
      temperature: number;
      max_tokens: number;
    };
    expect(JSON.stringify(second.system)).toContain('You answer in French.');
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(second.messages)).toContain('And once more?');
    expect(second.stream).toBe(true);
    expect(second.temperature).toBe(0.3);
    expect(second.max_tokens).toBe(200);
    await shot('40-playground-two-turns');
  });

  it('copies the exact request as curl, with $GATEWAY_API_KEY for the key', async () => {
    await page.getByTestId('pg-copy-curl').click();
    const curl = await page.evaluate(() => navigator.clipboard.readText());
    expect(curl).toContain(`curl ${gw.url}/v1/chat/completions -N`);
    expect(curl).toContain('-H "Authorization: Bearer $GATEWAY_API_KEY"');
    expect(curl).not.toContain('gwpg.');
    const body = JSON.parse(/-d '([\s\S]*)'$/.exec(curl)![1]!.replace(/'\\''/g, "'")) as Record<string, unknown>;
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You answer in French.' },
        { role: 'user', content: 'Say hello.' },
        { role: 'assistant', content: REPLY },
        { role: 'user', content: 'And once more?' },
      ],
      temperature: 0.3,
      max_tokens: 200,
      stream: true,
      stream_options: { include_usage: true },
    });
    await page.getByTestId('pg-copy-python').click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toContain('api_key=os.environ["GATEWAY_API_KEY"]');
    await page.getByTestId('pg-copy-typescript').click();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toContain('apiKey: process.env.GATEWAY_API_KEY');
  });

  it('shows each turn on the logs page as Playground, with the same cost', async () => {
    let rows: string[] = [];
    for (let i = 0; i < 40 && rows.length < 2; i++) {
      await page.goto(`${gw.url}/dashboard/logs`);
      rows = await page.getByTestId('log-row').allTextContents();
      if (rows.length < 2) await page.waitForTimeout(250);
    }
    expect(rows).toHaveLength(2);
    await expect(page.getByTestId('log-key').allTextContents()).resolves.toEqual(['Playground', 'Playground']);
    // Newest first: the second turn's row, then the first's.
    expect(rows[0]).toContain(costs[1]);
    expect(rows[1]).toContain(costs[0]);
    expect(rows[0]).toContain('claude-sonnet-4-5');
    await page.getByTestId('log-row').first().click();
    await page.waitForURL(/\/dashboard\/logs\/req_/, { waitUntil: 'commit' });
    await expect(page.locator('main').textContent()).resolves.toMatch(/API key\s*Playground/);
  });

  it('fits a 390 px phone, in Chinese and in dark mode', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      colorScheme: 'dark',
      locale: 'zh-CN',
      extraHTTPHeaders: { 'x-forwarded-for': '10.77.40.31', 'accept-language': 'zh-CN' },
    });
    const p = await phone.newPage();
    await p.goto(`${gw.url}/login`);
    await p.fill('#email', email);
    await p.fill('#password', password);
    await p.getByTestId('login-submit').click();
    await p.waitForURL(`${gw.url}/dashboard`, { waitUntil: 'commit' });
    await p.goto(`${gw.url}/dashboard/playground`);
    await p.getByTestId('pg-prompt').fill('');
    await p.getByTestId('pg-send').click();
    await expect(p.getByTestId('pg-prompt-error').textContent()).resolves.toBe('请先输入一条消息。');
    await p.getByTestId('pg-model').selectOption('gpt-4o-mini');
    await p.getByTestId('pg-prompt').fill('你好');
    await p.getByTestId('pg-send').click();
    await p.getByTestId('pg-turn-cost').waitFor({ timeout: 30_000 });
    const width = await p.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    const background = await p.evaluate(() => getComputedStyle(document.querySelector('[data-testid="pg-turns"]')!.parentElement!).backgroundColor);
    expect(background).not.toBe('rgb(255, 255, 255)');
    await p.screenshot({ path: path.join(shots, '41-playground-phone-dark-zh.png'), fullPage: true });
    await phone.close();
  });
});

// The browser tests' shared setup: the machine's Chromium, a page with its own client address (each
// test file takes its own, so the per-IP login limit is not shared between files running at once),
// and signing in or up through the real forms.
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM_LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
};

export function launchChromium(): Promise<Browser> {
  return chromium.launch(CHROMIUM_LAUNCH);
}

/** A page in a fresh context of its own, seen by the gateway (TRUST_PROXY) as coming from `ip`. */
export async function openPage(browser: Browser, ip: string, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options, extraHTTPHeaders: { 'x-forwarded-for': ip } });
  return context.newPage();
}

/** Signs in through /login and waits for the dashboard. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL(`${baseUrl}/dashboard`, { waitUntil: 'commit' });
}

/** Signs up through /register and waits for the dashboard. */
export async function signUp(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/register`);
  await page.fill('#email', email);
  await page.fill('#password', password);
  await page.getByTestId('register-submit').click();
  await page.waitForURL(`${baseUrl}/dashboard`, { waitUntil: 'commit' });
}

// public/ (favicon, icons, robots.txt, the web manifest) is served by `npm start`'s custom server,
// byte for byte, with the type its extension says, and every page links the icons.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, startGateway, testConfig, type RunningGateway } from '../support/gateway';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ config: testConfig({ openaiUrls: ['http://127.0.0.1:9'], channelPrefix: 'public' }) });
});

afterAll(async () => {
  await gw?.stop();
});

const publicFile = (name: string) => readFileSync(path.join(ROOT, 'public', name));

describe('public/', () => {
  it.each([
    ['favicon.ico', 'image/x-icon'],
    ['icon.svg', 'image/svg+xml'],
    ['apple-touch-icon.png', 'image/png'],
    ['icon-192.png', 'image/png'],
    ['icon-512.png', 'image/png'],
    ['robots.txt', 'text/plain'],
    ['manifest.webmanifest', 'application/manifest+json'],
  ])('serves %s as %s, the file as it is', async (name, type) => {
    const res = await fetch(`${gw.url}/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(type);
    expect(Buffer.from(await res.arrayBuffer()).equals(publicFile(name))).toBe(true);
  });

  it('robots.txt keeps crawlers out of the console and the APIs, not off the public pages', async () => {
    const text = await (await fetch(`${gw.url}/robots.txt`)).text();
    const disallowed = [...text.matchAll(/^Disallow: (\S+)$/gm)].map((m) => m[1]);
    expect(disallowed).toEqual(expect.arrayContaining(['/dashboard', '/admin', '/api/', '/v1/']));
    for (const page of ['/', '/pricing', '/docs']) expect(disallowed.some((d) => page === d || page.startsWith(d))).toBe(false);
  });

  it('the manifest names icons that are served', async () => {
    const manifest = (await (await fetch(`${gw.url}/manifest.webmanifest`)).json()) as { icons: { src: string }[] };
    expect(manifest.icons.length).toBeGreaterThan(0);
    for (const icon of manifest.icons) expect((await fetch(`${gw.url}${icon.src}`)).status, icon.src).toBe(200);
  });

  it('pages link the favicon, the SVG icon, the touch icon and the manifest', async () => {
    for (const page of ['/', '/login', '/pricing']) {
      const html = await (await fetch(`${gw.url}${page}`)).text();
      expect(html, page).toMatch(/<link rel="icon" href="\/icon\.svg"/);
      expect(html, page).toMatch(/<link rel="icon" href="\/favicon\.ico"/);
      expect(html, page).toMatch(/<link rel="apple-touch-icon" href="\/apple-touch-icon\.png"/);
      expect(html, page).toMatch(/<link rel="manifest" href="\/manifest\.webmanifest"/);
    }
  });

  it('serves nothing outside public/ under its names', async () => {
    for (const probe of ['/package.json', '/..%2fpackage.json', '/%2e%2e/package.json', '/public/robots.txt']) {
      const res = await fetch(`${gw.url}${probe}`);
      expect(res.status, probe).not.toBe(200);
    }
  });
});

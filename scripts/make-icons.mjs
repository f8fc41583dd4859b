// Renders public/icon.svg (the one drawn source) into the raster icons in public/: favicon.ico
// (16, 32 and 48 px, PNG entries; what browsers and crawlers ask /favicon.ico for), the
// apple-touch-icon (180 px) and icon-192/icon-512 (Android home screen, the web manifest). Run it
// after changing the SVG: `node scripts/make-icons.mjs`. Chromium draws the SVG (playwright-core is
// already a dev dependency for the e2e tests) so no image library is added; the ICO container is
// a 6-byte header and a 16-byte entry per image, written here.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(import.meta.dirname, '..');
const svg = await readFile(path.join(root, 'public/icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
try {
  const page = await browser.newPage();
  const render = async (size) => {
    await page.setViewportSize({ width: size, height: size });
    const src = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    await page.setContent(
      `<html><body style="margin:0;background:transparent"><img src="${src}" width="${size}" height="${size}" style="display:block"></body></html>`,
    );
    return page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
  };
  for (const [name, size] of [
    ['apple-touch-icon.png', 180],
    ['icon-192.png', 192],
    ['icon-512.png', 512],
  ]) {
    await writeFile(path.join(root, 'public', name), await render(size));
  }
  const images = [];
  for (const size of [16, 32, 48]) images.push({ size, png: await render(size) });
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // 1 = icon
  header.writeUInt16LE(images.length, 4);
  let offset = 6 + 16 * images.length;
  const entries = images.map(({ size, png }) => {
    const e = Buffer.alloc(16);
    e.writeUInt8(size, 0);
    e.writeUInt8(size, 1);
    e.writeUInt8(0, 2); // no palette
    e.writeUInt8(0, 3);
    e.writeUInt16LE(1, 4); // colour planes
    e.writeUInt16LE(32, 6); // bits per pixel
    e.writeUInt32LE(png.length, 8);
    e.writeUInt32LE(offset, 12);
    offset += png.length;
    return e;
  });
  await writeFile(path.join(root, 'public/favicon.ico'), Buffer.concat([header, ...entries, ...images.map((i) => i.png)]));
} finally {
  await browser.close();
}
console.log('wrote public/favicon.ico, apple-touch-icon.png, icon-192.png, icon-512.png');

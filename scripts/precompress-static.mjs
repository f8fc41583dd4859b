// After `next build`: a Brotli copy (quality 11) of every compressible file under .next/static, served
// by lib/http/static-assets.ts to browsers that accept br. Files are small; this takes seconds.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const root = path.resolve(import.meta.dirname, '..', '.next', 'static');
let count = 0;
let before = 0;
let after = 0;
for (const rel of readdirSync(root, { recursive: true })) {
  if (!/\.(js|css|svg|json)$/.test(rel)) continue;
  const file = path.join(root, rel);
  const data = readFileSync(file);
  if (data.length < 1024) continue; // not worth a second file; Next serves it
  const br = zlib.brotliCompressSync(data, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length },
  });
  writeFileSync(`${file}.br`, br);
  count++;
  before += data.length;
  after += br.length;
}
console.log(`precompressed ${count} static files: ${before} → ${after} B (br)`);

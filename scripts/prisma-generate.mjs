// `prisma generate` without network: the CLI checks for a schema engine binary it never uses here.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'node_modules/.bin/prisma');
if (!existsSync(bin)) {
  console.log('prisma CLI not installed; skipping generate');
  process.exit(0);
}
execFileSync(bin, ['generate'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/true',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});

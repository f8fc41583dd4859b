// Runs once before the suite: a fresh database on the real PostgreSQL (created next to the one in
// DATABASE_URL, dropped afterwards), migrations applied the way `npm run db:migrate` applies them,
// and a Redis database index picked at random. Separate runs on one machine therefore never disturb each other.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { GATEWAY_LOG_DIR } from './support/log-scan';

export default async function setup(): Promise<() => Promise<void>> {
  const baseUrl = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/test');
  const redisUrl = new URL(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  const name = `gw_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;

  // tests/zz-log-secret-scan.test.ts (run last) scans this run's gateway logs only.
  rmSync(GATEWAY_LOG_DIR, { recursive: true, force: true });

  const admin = new pg.Client({ connectionString: baseUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();

  const dbUrl = new URL(baseUrl);
  dbUrl.pathname = `/${name}`;
  redisUrl.pathname = `/${1 + Math.floor(Math.random() * 15)}`;
  process.env.DATABASE_URL = dbUrl.toString();
  process.env.REDIS_URL = redisUrl.toString();
  process.env.LOG_LEVEL ??= 'warn';
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], { stdio: 'inherit', env: process.env });

  return async () => {
    const client = new pg.Client({ connectionString: baseUrl.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.end();
  };
}

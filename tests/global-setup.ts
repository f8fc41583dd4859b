// Runs once before the suite: a clean schema on the real PostgreSQL, migrations applied the way
// `npm run db:migrate` applies them, and an empty Redis database.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { Redis } from 'ioredis';

export default async function setup(): Promise<void> {
  process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/test';
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  process.env.LOG_LEVEL ??= 'warn';
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;');
  await client.end();
  execFileSync('npx', ['tsx', 'scripts/migrate.ts'], { stdio: 'inherit', env: process.env });
  const redis = new Redis(process.env.REDIS_URL);
  await redis.flushdb();
  redis.disconnect();
}

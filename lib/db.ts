import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaClient } from '@/lib/generated/prisma/client';
import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';

export type Db = PrismaClient;

/** Where the embedded database lives when DATABASE_URL is not set. */
export function embeddedDataDir(): string {
  return path.resolve(env.DATA_DIR, 'pglite');
}

/** The one PGlite instance of this process (a data folder admits a single opener). */
export function getPglite(): Promise<PGlite> {
  return singleton('pglite', async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    mkdirSync(embeddedDataDir(), { recursive: true });
    return PGlite.create(embeddedDataDir());
  });
}

async function createAdapter() {
  if (env.DATABASE_URL) {
    const { PrismaPg } = await import('@prisma/adapter-pg');
    return new PrismaPg({ connectionString: env.DATABASE_URL, max: 10 });
  }
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  return new PrismaPGlite(await getPglite());
}

/** The process-wide Prisma client (shared by the route handlers and the lean /v1 server). */
export function getDb(): Promise<Db> {
  return singleton('db', async () => new PrismaClient({ adapter: await createAdapter() }));
}

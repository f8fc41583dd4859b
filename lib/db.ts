import path from 'node:path';
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { PgliteLike } from '@/lib/db/pglite-proxy';
import { PrismaClient } from '@/lib/generated/prisma/client';
import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';

export type Db = PrismaClient;

/** Where the embedded database lives when DATABASE_URL is not set. */
export function embeddedDataDir(): string {
  return path.resolve(env.DATA_DIR, 'pglite');
}

/** Another process holds the embedded database (see lockEmbeddedDatabase). */
export class EmbeddedDatabaseBusyError extends Error {
  constructor(
    readonly pid: number,
    lockFile: string,
  ) {
    super(
      `the server (pid ${pid}) holds the embedded database ${path.dirname(lockFile)}/pglite; stop it first or set DATABASE_URL ` +
        `(if no such process is running, delete ${lockFile})`,
    );
    this.name = 'EmbeddedDatabaseBusyError';
  }
}

/** The lock file of the embedded database: the pid of the process that has it open. */
export function embeddedLockFile(): string {
  return `${embeddedDataDir()}.lock`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/**
 * PGlite admits one process per data folder: a second one opening it (the admin CLI beside a running
 * server) would write beside the server, which never sees it. Whoever opens it first writes its pid
 * into DATA_DIR/pglite.lock (created exclusively) and removes it at exit; a lock whose process is
 * gone (SIGKILL, a crash) is stale and taken over. Anyone else gets EmbeddedDatabaseBusyError before
 * touching the database.
 */
function lockEmbeddedDatabase(): void {
  const file = embeddedLockFile();
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let pid = NaN;
      try {
        pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      } catch {
        continue; // removed meanwhile: try again
      }
      if (pid === process.pid) return;
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) throw new EmbeddedDatabaseBusyError(pid, file);
      // Stale (its process is gone, or a half-written file): take it over.
      try {
        unlinkSync(file);
      } catch {
        /* another process took it over first: the next attempt sees its pid */
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    process.once('exit', () => {
      try {
        if (Number.parseInt(readFileSync(file, 'utf8'), 10) === process.pid) unlinkSync(file);
      } catch {
        /* already gone */
      }
    });
    return;
  }
  throw new Error(`could not take the embedded database lock ${file}`);
}

/** Server settings added to PGlite's defaults (see PGLITE_SHARED_BUFFERS). */
function pgliteStartParams(): string[] {
  return ['-c', `shared_buffers=${env.PGLITE_SHARED_BUFFERS}`];
}

/**
 * The one embedded database of this process (a data folder admits a single opener: see
 * lockEmbeddedDatabase). By default PGlite runs in a worker thread (lib/db/pglite-proxy.ts); the
 * lock is still this process's pid.
 */
export function getPglite(): Promise<PgliteLike> {
  return singleton('pglite', async (): Promise<PgliteLike> => {
    mkdirSync(embeddedDataDir(), { recursive: true });
    lockEmbeddedDatabase();
    const startParams = pgliteStartParams();
    if (env.PGLITE_MODE === 'inline') {
      const { PGlite } = await import('@electric-sql/pglite');
      return PGlite.create(embeddedDataDir(), { startParams: [...PGlite.defaultStartParams, ...startParams] });
    }
    const { PgliteWorkerProxy } = await import('@/lib/db/pglite-proxy');
    return PgliteWorkerProxy.start(embeddedDataDir(), startParams);
  });
}

async function createAdapter() {
  if (env.DATABASE_URL) {
    const { PrismaPg } = await import('@prisma/adapter-pg');
    return new PrismaPg({ connectionString: env.DATABASE_URL, max: 10 });
  }
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  return new PrismaPGlite((await getPglite()) as unknown as PGlite);
}

/** The process-wide Prisma client (shared by the route handlers and the lean /v1 server). */
export function getDb(): Promise<Db> {
  return singleton('db', async () => new PrismaClient({ adapter: await createAdapter() }));
}

/** Whether `text` is a UUID: anything else, sent to a uuid column, is a database error (a 500), not a miss. */
export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}

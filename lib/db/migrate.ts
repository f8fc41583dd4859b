import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { env } from '@/lib/env';
import { getPglite } from '@/lib/db';
import type { PgliteLike } from '@/lib/db/pglite-proxy';

// Applies prisma/migrations/*/migration.sql in order and records them in `_prisma_migrations`
// exactly as Prisma Migrate does (same table, sha256 checksum), so `prisma migrate status` agrees.
// The Prisma CLI is not used because it downloads a schema engine, which offline machines cannot.

/** The statements one transaction runs. */
export interface SqlTx {
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** A connection of its own (PostgreSQL) or the process's embedded database (PGlite). */
export interface Sql extends SqlTx {
  /** PostgreSQL, where several processes may share the database; false for the embedded one. */
  shared: boolean;
  /** Runs `fn` in one transaction (on PGlite, the process's other queries wait for it). */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** A PostgreSQL connection of its own, closed by `close()`. */
export async function postgresSql(connectionString: string): Promise<Sql> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString });
  // A connection lost while idle (a database restart) must not crash the process: the next query
  // on it fails, and that failure is what the caller sees.
  client.on('error', () => undefined);
  await client.connect();
  const tx: SqlTx = {
    exec: async (sql) => void (await client.query(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
  return {
    ...tx,
    shared: true,
    transaction: async (fn) => {
      await client.query('BEGIN');
      try {
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    close: () => client.end(),
  };
}

/** An embedded database (the process's own, or one a test opened). `close()` leaves it open. */
export function pgliteSql(db: PgliteLike): Sql {
  const wrap = (d: Pick<PgliteLike, 'exec' | 'query'>): SqlTx => ({
    exec: async (sql) => void (await d.exec(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await d.query<T>(sql, params)).rows,
  });
  return { ...wrap(db), shared: false, transaction: (fn) => db.transaction((tx) => fn(wrap(tx))), close: async () => undefined };
}

/** The configured database: PostgreSQL with DATABASE_URL, else this process's embedded PGlite. */
export async function openSql(): Promise<Sql> {
  return env.DATABASE_URL ? postgresSql(env.DATABASE_URL) : pgliteSql(await getPglite());
}

export function migrationsDir(): string {
  return path.resolve(process.cwd(), 'prisma', 'migrations');
}

export async function runMigrations(dir = migrationsDir(), on?: Sql): Promise<string[]> {
  if (!existsSync(dir)) throw new Error(`migrations folder not found: ${dir}`);
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
  const sql = on ?? (await openSql());
  const applied: string[] = [];
  try {
    // Several instances may start at once against one PostgreSQL: serialise them.
    if (sql.shared) await sql.query('SELECT pg_advisory_lock(72731001)');
    await sql.exec(MIGRATIONS_TABLE);
    const done = await sql.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const doneByName = new Map(done.map((r) => [r.migration_name, r.checksum]));
    for (const name of names) {
      const body = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(body).digest('hex');
      const previous = doneByName.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) throw new Error(`migration ${name} was edited after it was applied`);
        continue;
      }
      await sql.exec('BEGIN');
      try {
        await sql.exec(body);
        await sql.query('INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)', [
          randomUUID(),
          checksum,
          name,
        ]);
        await sql.exec('COMMIT');
      } catch (err) {
        await sql.exec('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(err as Error).message}`);
      }
      applied.push(name);
    }
  } finally {
    if (sql.shared) await sql.query('SELECT pg_advisory_unlock(72731001)').catch(() => undefined);
    if (!on) await sql.close();
  }
  return applied;
}

import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { startPeriodic, stopPeriodic } from '@/lib/periodic';
import { openSql, type Sql, type SqlTx } from '@/lib/db/migrate';

// The request log's day partitions (migration 20261127330000_request_log_partitions). Run at server
// start, every REQUEST_LOG_MAINTENANCE_MS, and by `npm run db:migrate`:
// - today's partition and the next REQUEST_LOG_PARTITIONS_AHEAD days' are created ahead. A row of a
//   day without one goes to the DEFAULT partition, so nothing is ever refused; when a day's
//   partition is created later, that day's rows are moved out of the default into it in the same
//   transaction (writers of the log wait for it; readers do not), so each row stays exactly once.
// - with REQUEST_LOG_RETENTION_DAYS, days older than that are dropped whole (and such rows in the
//   default deleted). The daily rollups (UsageDaily: the usage report, charts and every key's
//   spend read them), balances and the ledger are untouched.
// Timestamps are UTC wall time (timestamp without time zone), so a partition is one UTC day.

const PARENT = 'RequestLog';
const DEFAULT_PARTITION = 'RequestLog_default';
// Serialises maintenance across instances sharing one PostgreSQL (the migration runner has its own).
const ADVISORY_LOCK = 72731002;
const DAY_MS = 86_400_000;
// Writers of the log wait while a day is created or dropped; never for long: the run is retried.
const LOCK_TIMEOUT = '2s';

export interface PartitionOptions {
  now?: Date;
  /** Days after today to create ahead. */
  daysAhead: number;
  /** Days before today to keep; 0 keeps everything. */
  retentionDays: number;
}

export interface MaintenanceResult {
  /** Partitions created, by name. */
  created: string[];
  /** Rows moved out of the default partition into a new day's. */
  moved: number;
  /** Partitions dropped by retention, by name. */
  dropped: string[];
  /** Rows older than the retention deleted from the default partition. */
  expired: number;
}

interface Partition {
  name: string;
  /** Bounds as PostgreSQL prints them ('2026-11-26 00:00:00'); null for the default or an open bound. */
  from: string | null;
  to: string | null;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const partitionName = (day: string) => `${PARENT}_p${day.replace(/-/g, '')}`;

/**
 * Takes the maintenance lock and sets this transaction's lock timeout and date style: partition
 * bounds are read back as text and compared with ISO text, which holds only in ISO date style (a
 * database set to another DateStyle would print '11/27/2026' and every day would look expired).
 */
async function begin(tx: SqlTx): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK]);
  await tx.query(`SELECT set_config('lock_timeout', $1, true), set_config('DateStyle', 'ISO, YMD', true)`, [LOCK_TIMEOUT]);
}

async function listPartitions(tx: SqlTx): Promise<Partition[]> {
  const rows = await tx.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass('"${PARENT}"')`,
  );
  return rows.map((r) => {
    const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(r.bound);
    return { name: r.name, from: m?.[1] ?? null, to: m?.[2] ?? null };
  });
}

/** Whether a partition other than the default holds (part of) the day starting at `start`. */
const covers = (p: Partition, start: string, end: string) => p.from !== null && p.to !== null && p.from < end && p.to > start;

async function createAhead(sql: Sql, today: number, daysAhead: number): Promise<{ created: string[]; moved: number }> {
  return sql.transaction(async (tx) => {
    await begin(tx);
    const partitions = await listPartitions(tx);
    const created: string[] = [];
    let moved = 0;
    for (let i = 0; i <= daysAhead; i++) {
      const day = isoDay(today + i * DAY_MS);
      const start = `${day} 00:00:00`;
      const end = `${isoDay(today + (i + 1) * DAY_MS)} 00:00:00`;
      if (partitions.some((p) => covers(p, start, end))) continue;
      const name = partitionName(day);
      const bounds = `FOR VALUES FROM ('${start}') TO ('${end}')`;
      // Writers wait from here to the commit, so no row of this day reaches the default meanwhile.
      // Readers do not: the day is made as a table of its own and attached, which locks the
      // parent only against other schema changes (CREATE TABLE ... PARTITION OF would lock out
      // every reader, and queue the readers behind it while it waits for a long one).
      await tx.exec(`LOCK TABLE ONLY ${quote(PARENT)} IN SHARE ROW EXCLUSIVE MODE`);
      await tx.exec(`CREATE TABLE ${quote(name)} (LIKE ${quote(PARENT)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      // Rows of this day in the default (written while it had no partition) move to it; attaching
      // checks that the default keeps none of the day.
      const rows = await tx.query<{ n: string }>(
        `WITH m AS (DELETE FROM ${quote(DEFAULT_PARTITION)} WHERE "createdAt" >= $1::timestamp AND "createdAt" < $2::timestamp RETURNING *),
              i AS (INSERT INTO ${quote(name)} SELECT * FROM m RETURNING 1)
         SELECT count(*)::text AS n FROM i`,
        [start, end],
      );
      await tx.exec(`ALTER TABLE ${quote(PARENT)} ATTACH PARTITION ${quote(name)} ${bounds}`);
      moved += Number(rows[0].n);
      partitions.push({ name, from: start, to: end });
      created.push(name);
    }
    return { created, moved };
  });
}

async function dropExpired(sql: Sql, today: number, retentionDays: number): Promise<{ dropped: string[]; expired: number }> {
  const cutoff = `${isoDay(today - retentionDays * DAY_MS)} 00:00:00`;
  return sql.transaction(async (tx) => {
    await begin(tx);
    const dropped: string[] = [];
    for (const p of await listPartitions(tx)) {
      if (p.to === null || p.to > cutoff) continue;
      await tx.exec(`DROP TABLE ${quote(p.name)}`);
      dropped.push(p.name);
    }
    const rows = await tx.query<{ n: string }>(
      `WITH d AS (DELETE FROM ${quote(DEFAULT_PARTITION)} WHERE "createdAt" < $1::timestamp RETURNING 1) SELECT count(*)::text AS n FROM d`,
      [cutoff],
    );
    return { dropped, expired: Number(rows[0].n) };
  });
}

/** Creates the coming days' partitions and applies the retention; see the top of this file. */
export async function maintainRequestLogPartitions(sql: Sql, opts: PartitionOptions): Promise<MaintenanceResult> {
  const now = opts.now ?? new Date();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const { created, moved } = await createAhead(sql, today, opts.daysAhead);
  const { dropped, expired } = opts.retentionDays > 0 ? await dropExpired(sql, today, opts.retentionDays) : { dropped: [], expired: 0 };
  return { created, moved, dropped, expired };
}

/** One maintenance run on the configured database with the configured settings. */
export async function maintainPartitionsNow(sql?: Sql): Promise<MaintenanceResult> {
  const conn = sql ?? (await openSql());
  try {
    const result = await maintainRequestLogPartitions(conn, { daysAhead: env.REQUEST_LOG_PARTITIONS_AHEAD, retentionDays: env.REQUEST_LOG_RETENTION_DAYS });
    if (result.created.length || result.dropped.length || result.expired)
      log('info', 'request-log partitions maintained', { ...result, created: result.created.length, dropped: result.dropped });
    return result;
  } finally {
    if (!sql) await conn.close();
  }
}

const MAINTENANCE = 'request-log partition maintenance';

/**
 * Every REQUEST_LOG_MAINTENANCE_MS, the maintenance run (server start runs it once before serving).
 * A failed run (a lock not granted in time) is retried at the next tick; meanwhile rows go to the
 * default partition.
 */
export function startPartitionMaintenance(): void {
  startPeriodic(MAINTENANCE, env.REQUEST_LOG_MAINTENANCE_MS, async () => {
    await maintainPartitionsNow();
  });
}

export function stopPartitionMaintenance(): void {
  stopPeriodic(MAINTENANCE);
}

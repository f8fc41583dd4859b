// The request log partitioned by UTC day (migration 20261127330000_request_log_partitions and
// lib/db/partitions.ts), on PostgreSQL (a private database) and on the embedded PGlite alike:
// existing rows are converted, partitions are created ahead, rows of a day without one wait in the
// default partition and are moved out when it is created, the batch writer's statement stays
// exactly-once (a replayed batch adds no row and no rollup count), and retention drops whole days
// while the rollups (usage report, charts, key spend) stay.

import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logRecord } from '../support/log-record';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { WRITE_BATCH } from '@/lib/billing/writer';
import { migrationsDir, pgliteSql, postgresSql, runMigrations, type Sql } from '@/lib/db/migrate';
import { maintainRequestLogPartitions, partitionName } from '@/lib/db/partitions';
import type { PgliteLike } from '@/lib/db/pglite-proxy';

const PARTITIONING = '20261127330000_request_log_partitions';

interface Backend {
  name: string;
  open(): Promise<Sql>;
  close(): Promise<void>;
}

function postgresBackend(): Backend {
  const base = new URL(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/test');
  const dbName = `gw_part_${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  let sql: Sql | undefined;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: base.toString() });
    await c.connect();
    await c.query(statement);
    await c.end();
  };
  return {
    name: 'PostgreSQL',
    open: async () => {
      await admin(`CREATE DATABASE "${dbName}"`);
      sql = await postgresSql(url.toString());
      return sql;
    },
    close: async () => {
      await sql?.close();
      await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    },
  };
}

function pgliteBackend(): Backend {
  let db: PGlite | undefined;
  return {
    name: 'PGlite',
    open: async () => {
      db = await PGlite.create();
      return pgliteSql(db as unknown as PgliteLike);
    },
    close: async () => {
      await db?.close();
    },
  };
}

/** A row as the batch writer queues it (lib/billing/writer.ts toRow): money as decimal text. */
function row(userId: string, createdAt: string, over: Record<string, unknown> = {}) {
  const { costPico: _usd, costCnyPico: _cny, ...rest } = logRecord(userId);
  return { ...rest, createdAt, costUsd: '0.000001', costCny: '0.0000072', ...over };
}

for (const backend of [postgresBackend(), pgliteBackend()]) {
  describe(`request log partitioned by day (${backend.name})`, () => {
    let sql: Sql;
    let tmp: string;
    const userId = randomUUID();
    const keyId = randomUUID();
    const write = (rows: object[]) => sql.query<{ id: string }>(WRITE_BATCH, [JSON.stringify(rows)]);
    const partitionOf = async (id: string) =>
      (await sql.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM "RequestLog" WHERE id = $1`, [id])).map((r) => r.p.replace(/"/g, ''));
    const rollup = async (day: string) =>
      (await sql.query<{ requests: string }>(`SELECT requests::text FROM "UsageDaily" WHERE "userId" = $1::uuid AND day = $2::date`, [userId, day]))[0]
        ?.requests;
    const partitions = async () =>
      (
        await sql.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"RequestLog"'::regclass ORDER BY 1`,
        )
      ).map((r) => r.name);

    beforeAll(async () => {
      sql = await backend.open();
      // Every migration before the partitioning, then rows logged the old way, then the rest.
      tmp = mkdtempSync(path.join(os.tmpdir(), 'gw-migrations-'));
      for (const name of readdirSync(migrationsDir()).filter((n) => n < PARTITIONING))
        cpSync(path.join(migrationsDir(), name), path.join(tmp, name), { recursive: true });
      await runMigrations(tmp, sql);
      await sql.query(`INSERT INTO "User" (id, email, "passwordHash", "balanceUsd", "updatedAt") VALUES ($1::uuid, $2, 'x', 1, now())`, [
        userId,
        `${userId}@example.com`,
      ]);
      await sql.query(`INSERT INTO "ApiKey" (id, "userId", name, hash, prefix, "lastFour") VALUES ($1::uuid, $2::uuid, 'k', $3, 'sk-', 'abcd')`, [
        keyId,
        userId,
        randomBytes(16).toString('hex'),
      ]);
      // Rows logged before the partitioning (the rollup is rebuilt from the log by the migration).
      const old = [row(userId, '2026-10-01T10:00:00.000Z', { id: 'old_1', apiKeyId: keyId }), row(userId, '2026-10-02T23:59:59.999Z', { id: 'old_2' })];
      await sql.query(`INSERT INTO "RequestLog" SELECT * FROM json_populate_recordset(NULL::"RequestLog", $1::json)`, [JSON.stringify(old)]);
      // The partitioning, then the migrations after it, each applied once.
      const later = readdirSync(migrationsDir())
        .filter((n) => n >= PARTITIONING && !n.includes('.'))
        .sort();
      expect(later[0]).toBe(PARTITIONING);
      expect(await runMigrations(migrationsDir(), sql)).toEqual(later);
    }, 120_000);

    afterAll(async () => {
      await backend.close();
      rmSync(tmp, { recursive: true, force: true });
    });

    it('converts the existing rows into one partition per day, keyed by (id, createdAt), with the indexes kept', async () => {
      expect(await partitions()).toEqual(['RequestLog_default', 'RequestLog_p20261001', 'RequestLog_p20261002']);
      expect(await partitionOf('old_1')).toEqual(['RequestLog_p20261001']);
      expect(await partitionOf('old_2')).toEqual(['RequestLog_p20261002']);
      const indexes = await sql.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'RequestLog' ORDER BY indexname`);
      expect(indexes.map((i) => i.indexdef.replace(/^.* USING btree /, ''))).toEqual([
        '("createdAt")',
        '(id, "createdAt")',
        '("userId", "apiKeyId", "createdAt")',
        '("userId", "createdAt")',
      ]);
    });

    it('creates today and the days ahead, and a replayed batch adds no row and no rollup count', async () => {
      const result = await maintainRequestLogPartitions(sql, { now: new Date('2026-11-20T15:00:00Z'), daysAhead: 2, retentionDays: 0 });
      expect(result.created).toEqual(['RequestLog_p20261120', 'RequestLog_p20261121', 'RequestLog_p20261122']);
      // Run again: nothing more to do.
      expect((await maintainRequestLogPartitions(sql, { now: new Date('2026-11-20T16:00:00Z'), daysAhead: 2, retentionDays: 0 })).created).toEqual([]);
      const batch = [row(userId, '2026-11-20T10:00:00.000Z', { apiKeyId: keyId }), row(userId, '2026-11-21T00:00:00.000Z')];
      expect(await write(batch)).toHaveLength(1);
      expect(await write(batch)).toEqual([]); // the replay charges nobody
      expect(await partitionOf(batch[0].id)).toEqual(['RequestLog_p20261120']);
      expect(await partitionOf(batch[1].id)).toEqual(['RequestLog_p20261121']);
      expect(await rollup('2026-11-20')).toBe('1');
      expect(await rollup('2026-11-21')).toBe('1');
      const [{ balance }] = await sql.query<{ balance: string }>(`SELECT "balanceUsd"::text AS balance FROM "User" WHERE id = $1::uuid`, [userId]);
      expect(balance).toBe('0.999998000000'); // the two rows written now
    });

    it('keeps a row of a day without a partition in the default, and moves it out once when the day is created', async () => {
      const stray = row(userId, '2026-12-30T08:00:00.000Z');
      await write([stray]);
      expect(await partitionOf(stray.id)).toEqual(['RequestLog_default']);
      await write([stray]);
      expect(await rollup('2026-12-30')).toBe('1');
      const result = await maintainRequestLogPartitions(sql, { now: new Date('2026-12-29T00:00:00Z'), daysAhead: 1, retentionDays: 0 });
      expect(result).toMatchObject({ created: ['RequestLog_p20261229', 'RequestLog_p20261230'], moved: 1 });
      expect(await partitionOf(stray.id)).toEqual([partitionName('2026-12-30')]);
      // Replayed after the move: it lands in the new partition, meets its row, adds nothing.
      expect(await write([stray])).toEqual([]);
      expect(await partitionOf(stray.id)).toEqual(['RequestLog_p20261230']);
      expect(await rollup('2026-12-30')).toBe('1');
    });

    it('drops days older than the retention whole; rollups (and so the key’s spend) stay', async () => {
      const strayOld = row(userId, '2026-09-15T08:00:00.000Z', { apiKeyId: keyId, costUsd: '0.5' });
      await write([strayOld]); // no partition for that day: in the default
      const result = await maintainRequestLogPartitions(sql, { now: new Date('2026-11-20T12:00:00Z'), daysAhead: 0, retentionDays: 35 });
      // Kept: 2026-10-16 and later. Dropped: the two October days converted above.
      expect(result).toMatchObject({ dropped: ['RequestLog_p20261001', 'RequestLog_p20261002'], expired: 1 });
      expect(await partitions()).not.toContain('RequestLog_p20261001');
      expect(await partitionOf('old_1')).toEqual([]);
      expect(await partitionOf(strayOld.id)).toEqual([]);
      expect(await rollup('2026-10-01')).toBe('1');
      expect(await rollup('2026-09-15')).toBe('1');
      // The key's spend is read from the rollup (lib/keys/queries.ts): the dropped days still count.
      const [{ keySpend }] = await sql.query<{ keySpend: string }>(
        `SELECT sum("costUsd")::text AS "keySpend" FROM "UsageDaily" WHERE "userId" = $1::uuid AND "apiKeyId" = $2::uuid`,
        [userId, keyId],
      );
      expect(keySpend).toBe('0.500002000000'); // old_1, the stray row, and the 2026-11-20 row still logged
      const [{ kept }] = await sql.query<{ kept: number }>(`SELECT count(*)::int AS kept FROM "RequestLog"`);
      expect(kept).toBe(3);
    });

    it('reads partition bounds alike whatever DateStyle the database prints dates in', async () => {
      const before = await partitions();
      await sql.query(`SET DateStyle = 'SQL, MDY'`);
      try {
        const result = await maintainRequestLogPartitions(sql, { now: new Date('2026-11-20T12:00:00Z'), daysAhead: 2, retentionDays: 35 });
        expect(result).toEqual({ created: [], moved: 0, dropped: [], expired: 0 });
      } finally {
        await sql.query(`RESET DateStyle`);
      }
      expect(await partitions()).toEqual(before);
      const [{ kept }] = await sql.query<{ kept: number }>(`SELECT count(*)::int AS kept FROM "RequestLog"`);
      expect(kept).toBe(3);
    });

    it('stores the price breakdown with the row, in its day partition (migration 20261128181000); older rows have none', async () => {
      const breakdown = { t: 'base', l: [['input', 10, '150000', '1500000']], a: [['batch_discount', '50', '-750000']] };
      const priced = row(userId, '2026-11-21T09:00:00.000Z', { costUsd: '0.00000075', priceBreakdown: breakdown });
      await write([priced]);
      expect(await partitionOf(priced.id)).toEqual(['RequestLog_p20261121']);
      const stored = await sql.query<{ b: unknown; id: string }>(`SELECT id, "priceBreakdown" AS b FROM "RequestLog" WHERE id = ANY($1) ORDER BY id`, [
        [priced.id, 'old_2'],
      ]);
      const b = stored.find((r) => r.id === priced.id)!.b;
      expect(typeof b === 'string' ? JSON.parse(b) : b).toEqual(breakdown);
      expect(stored.find((r) => r.id === 'old_2')).toBeUndefined(); // dropped by retention above; rows from before carry NULL
      const [{ nulls }] = await sql.query<{ nulls: number }>(`SELECT count(*)::int AS nulls FROM "RequestLog" WHERE "priceBreakdown" IS NULL`);
      expect(nulls).toBe(3);
    });
  });
}

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { messages } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PgliteWorkerProxy, asPglite } from '@/lib/db/pglite-proxy';
import { PrismaClient } from '@/lib/generated/prisma/client';

// The worker-thread PGlite behind the Prisma adapter: the same results, errors and transaction
// semantics as PGlite in-process.
describe('PGlite in a worker thread', () => {
  let dir: string;
  let db: PgliteWorkerProxy;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gw-pglite-proxy-'));
    db = await PgliteWorkerProxy.start(path.join(dir, 'pglite'), ['-c', 'shared_buffers=16MB']);
    await db.exec(`CREATE TABLE t (id int PRIMARY KEY, n numeric(20,12), at timestamptz, j jsonb, b bytea, big bigint)`);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts with the server settings given (PGLITE_SHARED_BUFFERS)', async () => {
    expect((await db.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0].shared_buffers).toBe('16MB');
  });

  it('queries with parameters and applies the caller’s parsers on this side', async () => {
    await db.query('INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)', [1, '1.5', '2026-01-02 03:04:05', '{"a":1}', new Uint8Array([1, 2]), 9007199254740993n]);
    const plain = await db.query<{ id: number; n: string; big: bigint }>('SELECT id, n, big FROM t');
    expect(plain.rows[0].id).toBe(1);
    expect(plain.rows[0].big).toBe(9007199254740993n);
    const parsed = await db.query<unknown[]>('SELECT n, at FROM t', [], {
      rowMode: 'array',
      parsers: { 1700: (v: string) => `n:${v}`, 1184: (v: string) => `at:${v}` },
    });
    expect(parsed.rows[0]).toEqual(['n:1.500000000000', 'at:2026-01-02 03:04:05+00']);
    expect(parsed.fields.map((f) => f.dataTypeID)).toEqual([1700, 1184]);
  });

  it('raises database errors as PGlite DatabaseError with their fields', async () => {
    const err = await db.query('INSERT INTO t (id) VALUES (1)').catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe('23505');
    expect(err).toBeInstanceOf(messages.DatabaseError); // what the adapter maps to Prisma's error kinds
  });

  it('rejects options that cannot cross threads without leaving the call pending', async () => {
    await expect(db.query('SELECT 1', [], { serializers: { 25: (x: unknown) => String(x) } })).rejects.toThrow();
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
  });

  it('commits, rolls back, and makes other queries wait for an open transaction', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id) VALUES (10)');
    });
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id) VALUES (11)');
      await tx.rollback();
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id) VALUES (12)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const ids = (await db.query<{ id: number }>('SELECT id FROM t WHERE id >= 10 ORDER BY id')).rows.map((r) => r.id);
    expect(ids).toEqual([10]);
  });

  it('serves the Prisma adapter: reads, unique violations, interactive transactions', async () => {
    await db.exec(`CREATE TABLE "User" (id text PRIMARY KEY, email text UNIQUE)`);
    // A raw client against an ad-hoc table: the generated client's models are not needed for this.
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(asPglite(db)) });
    try {
      await prisma.$executeRawUnsafe(`INSERT INTO "User" VALUES ('a', 'a@example.com')`);
      const dup = await prisma.$executeRawUnsafe(`INSERT INTO "User" VALUES ('b', 'a@example.com')`).catch((e: { code?: string }) => e);
      expect((dup as { code?: string }).code).toBe('P2010'); // raw queries report the database error inside P2010
      expect(String((dup as Error).message)).toMatch(/23505|unique/i);
      await prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`INSERT INTO "User" VALUES ('c', 'c@example.com')`);
      });
      await prisma
        .$transaction(async (tx) => {
          await tx.$executeRawUnsafe(`INSERT INTO "User" VALUES ('d', 'd@example.com')`);
          throw new Error('undo');
        })
        .catch(() => undefined);
      const rows = await prisma.$queryRawUnsafe<{ id: string; created: Date }[]>(`SELECT id, now() AS created FROM "User" ORDER BY id`);
      expect(rows.map((r) => r.id)).toEqual(['a', 'c']);
      expect(rows[0].created).toBeInstanceOf(Date);
    } finally {
      await prisma.$disconnect();
    }
  }, 60_000);
});

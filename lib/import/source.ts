import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayError } from '@/lib/errors';

// Reading another gateway's database (new-api, one-api): SQLite (their default) through sql.js
// (SQLite compiled to WebAssembly, no native build or download), PostgreSQL through pg, MySQL and
// MariaDB through mysql2. Only whole tables are read, with SELECT *, and each row becomes a plain
// object by column name: the importer tolerates the columns either project added or dropped over time.

export type Row = Record<string, unknown>;

export interface SourceDb {
  kind: 'sqlite' | 'postgres' | 'mysql';
  /** Stable across runs for the same database, without its password: the idempotency records' source. */
  fingerprint: string;
  /** Every row of a table; [] when the table does not exist. */
  rows(table: string): Promise<Row[]>;
  close(): Promise<void>;
}

const TABLES = new Set(['users', 'tokens', 'channels', 'redemptions']);

function assertTable(table: string): void {
  // The names are ours, never the operator's: a fixed list keeps them out of any injection question.
  if (!TABLES.has(table)) throw new Error(`unknown table ${table}`);
}

const fingerprintOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The SQLite file a `--database-url` names: `sqlite:///abs/path`, `sqlite:rel/path`, `file:…`, or a bare path. */
function sqlitePath(url: string): string | null {
  const m = /^(?:sqlite|file):(?:\/\/)?(.*)$/i.exec(url);
  if (m) return path.resolve(m[1].split('?')[0]);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return path.resolve(url);
  return null;
}

export async function openSource(url: string): Promise<SourceDb> {
  const file = sqlitePath(url);
  if (file) {
    if (!existsSync(file)) throw new GatewayError('invalid_request', `--database-url: no SQLite file at ${file}`);
    const { default: initSqlJs } = await import('sql.js');
    const SQL = await initSqlJs();
    const db = new SQL.Database(readFileSync(file));
    const names = new Set(db.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`)[0]?.values.map((v) => String(v[0])) ?? []);
    return {
      kind: 'sqlite',
      fingerprint: fingerprintOf(`sqlite:${file}`),
      async rows(table) {
        assertTable(table);
        if (!names.has(table)) return [];
        const result = db.exec(`SELECT * FROM "${table}"`)[0];
        if (!result) return [];
        return result.values.map((values) => Object.fromEntries(result.columns.map((c, i) => [c, values[i]])));
      },
      async close() {
        db.close();
      },
    };
  }
  const parsed = new URL(url);
  const withoutPassword = `${parsed.protocol}//${parsed.username}@${parsed.host}${parsed.pathname}`;
  if (parsed.protocol === 'postgres:' || parsed.protocol === 'postgresql:') {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      kind: 'postgres',
      fingerprint: fingerprintOf(withoutPassword),
      async rows(table) {
        assertTable(table);
        const exists = await client.query(`SELECT to_regclass($1) AS t`, [table]);
        if (!exists.rows[0]?.t) return [];
        return (await client.query(`SELECT * FROM "${table}"`)).rows as Row[];
      },
      async close() {
        await client.end();
      },
    };
  }
  if (parsed.protocol === 'mysql:' || parsed.protocol === 'mariadb:') {
    const mysql = await import('mysql2/promise');
    parsed.protocol = 'mysql:';
    const conn = await mysql.createConnection({ uri: parsed.toString(), supportBigNumbers: true, bigNumberStrings: true, dateStrings: true });
    return {
      kind: 'mysql',
      fingerprint: fingerprintOf(withoutPassword.replace(/^mariadb:/, 'mysql:')),
      async rows(table) {
        assertTable(table);
        const [found] = await conn.query('SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table]);
        if (Number((found as Row[])[0]?.n ?? 0) === 0) return [];
        const [rows] = await conn.query(`SELECT * FROM \`${table}\``);
        return rows as Row[];
      },
      async close() {
        await conn.end();
      },
    };
  }
  throw new GatewayError('invalid_request', `--database-url: ${parsed.protocol} is not supported (a SQLite file, postgres:// or mysql://)`);
}

// Column readers: each database hands back its own types (SQLite integers as numbers, PostgreSQL's
// bigint and MySQL's big numbers as strings, booleans as 0/1 or true/false, Buffers for BLOBs).

export function text(row: Row, column: string): string {
  const v = row[column];
  if (v === null || v === undefined) return '';
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return String(v);
}

export function int(row: Row, column: string, fallback = 0): bigint {
  const v = row[column];
  if (v === null || v === undefined || v === '') return BigInt(fallback);
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  const s = String(v).trim();
  return /^-?\d+$/.test(s) ? BigInt(s) : BigInt(fallback);
}

export function bool(row: Row, column: string): boolean {
  const v = row[column];
  return v === true || v === 1 || v === '1' || v === 't' || v === 'true' || v === 1n;
}

/** gorm's soft delete: a `deleted_at` set. */
export function deleted(row: Row): boolean {
  const v = row.deleted_at;
  return v !== null && v !== undefined && v !== '';
}

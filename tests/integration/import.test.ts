// `npm run admin -- import --from new-api|one-api`: a fixture database of each project (their gorm
// schema for users, tokens, channels and redemptions, written here as SQL DDL) in SQLite (built with
// sql.js), in a fresh PostgreSQL database and in MariaDB; a dry run writes nothing, the import brings
// accounts, balances, keys, codes and channels over, a second run duplicates nothing, and the
// imported account calls the built gateway with its old token, through the imported channel.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import pg from 'pg';
import mysql from 'mysql2/promise';
import YAML from 'yaml';
import { startGateway, testConfig, writeConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { getDb } from '@/lib/db';

const run = promisify(execFile);
const SECRETS_KEY = 'a'.repeat(64);
const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-import-'));
const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const key48 = () => [...randomBytes(48)].map((b) => B62[b % 62]).join('');

type Dialect = 'sqlite' | 'postgres' | 'mysql';
type Flavor = 'new-api' | 'one-api';

interface Fixture {
  flavor: Flavor;
  dialect: Dialect;
  tag: string;
  aliceEmail: string;
  alicePassword: string;
  aliceKey: string; // as stored there (48 characters, no sk-)
  oddKey: string;
  bobKey: string;
  code: string;
  channelKey: string;
}

function newFixture(flavor: Flavor, dialect: Dialect): Fixture {
  const tag = randomBytes(4).toString('hex');
  return {
    flavor,
    dialect,
    tag,
    aliceEmail: `alice-${tag}@example.com`,
    alicePassword: 'alice-old-password-1',
    aliceKey: key48(),
    oddKey: `legacy_${tag}`,
    bobKey: key48(),
    code: randomBytes(16).toString('hex'),
    channelKey: `sk-upstream-${tag}`,
  };
}

/** Their schema (model/*.go, gorm), in each database's types; one-api lacks new-api's later columns. */
function ddl(f: Fixture): string[] {
  const q = (n: string) => (f.dialect === 'mysql' ? `\`${n}\`` : `"${n}"`);
  const id =
    f.dialect === 'sqlite' ? 'integer PRIMARY KEY AUTOINCREMENT' : f.dialect === 'postgres' ? 'bigserial PRIMARY KEY' : 'bigint AUTO_INCREMENT PRIMARY KEY';
  const str = (n = 191) => (f.dialect === 'mysql' ? `varchar(${n})` : 'text');
  const bool = f.dialect === 'postgres' ? 'boolean' : 'tinyint(1)';
  const ts = f.dialect === 'postgres' ? 'timestamptz' : 'datetime';
  const newApi = f.flavor === 'new-api';
  return [
    `CREATE TABLE users (id ${id}, username ${str(20)} UNIQUE, password ${str()} NOT NULL, display_name ${str(20)}, role bigint DEFAULT 1, status bigint DEFAULT 1,
      email ${str(50)}, github_id ${str()}, access_token char(32), quota bigint DEFAULT 0, used_quota bigint DEFAULT 0, request_count bigint DEFAULT 0,
      ${q('group')} ${str(64)} DEFAULT 'default', aff_code ${str(32)}, inviter_id bigint${newApi ? `, deleted_at ${ts} NULL, setting text` : ''})`,
    `CREATE TABLE tokens (id ${id}, user_id bigint, ${q('key')} ${newApi ? 'varchar(128)' : 'char(48)'} UNIQUE, status bigint DEFAULT 1, name ${str()},
      created_time bigint, accessed_time bigint, expired_time bigint DEFAULT -1, remain_quota bigint DEFAULT 0, unlimited_quota ${bool},
      used_quota bigint DEFAULT 0${newApi ? `, model_limits_enabled ${bool}, model_limits text, allow_ips ${str()} DEFAULT '', ${q('group')} ${str()} DEFAULT '', deleted_at ${ts} NULL` : ''})`,
    `CREATE TABLE channels (id ${id}, type bigint DEFAULT 0, ${q('key')} text NOT NULL, openai_organization text, test_model text, status bigint DEFAULT 1,
      name ${str()}, weight bigint DEFAULT 0, created_time bigint, test_time bigint, response_time bigint, base_url text, other text, balance double precision,
      balance_updated_time bigint, models text, ${q('group')} ${str(64)} DEFAULT 'default', used_quota bigint DEFAULT 0, model_mapping text, priority bigint DEFAULT 0
      ${newApi ? `, auto_ban bigint DEFAULT 1, tag ${str()}, setting text, channel_info text` : ''})`,
    `CREATE TABLE redemptions (id ${id}, user_id bigint, ${q('key')} char(32) UNIQUE, status bigint DEFAULT 1, name ${str()}, quota bigint DEFAULT 100,
      created_time bigint, redeemed_time bigint${newApi ? `, used_user_id bigint, deleted_at ${ts} NULL, expired_time bigint` : ''})`,
  ];
}

function inserts(f: Fixture, upstreamUrl: string): { sql: string; params: unknown[] }[] {
  const q = (n: string) => (f.dialect === 'mysql' ? `\`${n}\`` : `"${n}"`);
  const p = (n: number) => Array.from({ length: n }, (_, i) => (f.dialect === 'postgres' ? `$${i + 1}` : '?')).join(', ');
  const t = f.dialect === 'postgres' ? true : 1;
  const fa = f.dialect === 'postgres' ? false : 0;
  const hash = bcrypt.hashSync(f.alicePassword, 4).replace(/^\$2b\$/, '$2a$'); // Go's bcrypt writes $2a$
  const newApi = f.flavor === 'new-api';
  const later = Math.floor(Date.now() / 1000) + 86_400 * 30;
  const rows: { sql: string; params: unknown[] }[] = [
    // alice: $5.00 (2,500,000 quota at 500,000 per USD), bcrypt password, an email.
    {
      sql: `INSERT INTO users (id, username, password, role, status, email, quota) VALUES (${p(7)})`,
      params: [1, `alice${f.tag}`, hash, 1, 1, f.aliceEmail, 2_500_000],
    },
    // bob: $2.00, no email, a password hash this gateway cannot check; an administrator there.
    {
      sql: `INSERT INTO users (id, username, password, role, status, email, quota) VALUES (${p(7)})`,
      params: [2, `bob${f.tag}`, 'plain-or-other-hash', 10, 1, '', 1_000_000],
    },
    // carol: deleted there.
    {
      sql: `INSERT INTO users (id, username, password, role, status, email, quota) VALUES (${p(7)})`,
      params: [3, `carol${f.tag}`, hash, 1, 3, `carol-${f.tag}@example.com`, 5],
    },
    {
      sql: `INSERT INTO tokens (id, user_id, ${q('key')}, status, name, expired_time, remain_quota, unlimited_quota) VALUES (${p(8)})`,
      params: [1, 1, f.aliceKey, 1, 'main', -1, 0, t],
    },
    {
      sql: `INSERT INTO tokens (id, user_id, ${q('key')}, status, name, expired_time, remain_quota, unlimited_quota) VALUES (${p(8)})`,
      params: [2, 1, f.oddKey, 1, 'odd', later, 0, t],
    },
    {
      sql: `INSERT INTO tokens (id, user_id, ${q('key')}, status, name, expired_time, remain_quota, unlimited_quota) VALUES (${p(8)})`,
      params: [3, 1, key48(), 2, 'off', -1, 0, t],
    },
    // bob's key: a budget of 500,000 quota = $1.00.
    {
      sql: `INSERT INTO tokens (id, user_id, ${q('key')}, status, name, expired_time, remain_quota, unlimited_quota) VALUES (${p(8)})`,
      params: [4, 2, f.bobKey, 1, 'bob', -1, 500_000, fa],
    },
    { sql: `INSERT INTO redemptions (id, ${q('key')}, status, name, quota) VALUES (${p(5)})`, params: [1, f.code, 1, 'gift', 1_000_000] },
    {
      sql: `INSERT INTO redemptions (id, ${q('key')}, status, name, quota) VALUES (${p(5)})`,
      params: [2, randomBytes(16).toString('hex'), 3, 'used', 1_000_000],
    },
    // An OpenAI channel at the fake upstream (their base URL has no /v1), one model we do not serve.
    {
      sql: `INSERT INTO channels (id, type, ${q('key')}, status, name, weight, base_url, models, priority) VALUES (${p(9)})`,
      params: [1, 1, f.channelKey, 1, 'primary', 0, upstreamUrl, 'gpt-4o-mini,no-such-model', 100],
    },
    {
      sql: `INSERT INTO channels (id, type, ${q('key')}, status, name, weight, base_url, models, priority) VALUES (${p(9)})`,
      params: [2, 3, 'azure-key', 1, 'azure', 1, '', 'gpt-4o-mini', 0],
    },
  ];
  if (newApi)
    rows.push({ sql: `UPDATE users SET deleted_at = ${f.dialect === 'postgres' ? 'now()' : "'2025-01-01 00:00:00'"}, status = 1 WHERE id = 3`, params: [] });
  return rows;
}

let pgAdmin: pg.Client;
const cleanups: (() => Promise<unknown>)[] = [];

async function createFixture(f: Fixture, upstreamUrl: string): Promise<string> {
  if (f.dialect === 'sqlite') {
    const { default: initSqlJs } = await import('sql.js');
    const db = new (await initSqlJs()).Database();
    for (const s of ddl(f)) db.run(s);
    for (const r of inserts(f, upstreamUrl)) db.run(r.sql, r.params as (string | number)[]);
    const file = path.join(dir, `${f.flavor}-${f.tag}.db`);
    writeFileSync(file, db.export());
    db.close();
    return file;
  }
  if (f.dialect === 'postgres') {
    const name = `import_fixture_${f.tag}`;
    await pgAdmin.query(`CREATE DATABASE ${name}`);
    cleanups.push(() => pgAdmin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const c = new pg.Client({ connectionString: url.toString() });
    await c.connect();
    for (const s of ddl(f)) await c.query(s);
    for (const r of inserts(f, upstreamUrl)) await c.query(r.sql, r.params);
    await c.end();
    return url.toString();
  }
  const name = `import_fixture_${f.tag}`;
  const root = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await root.query(`CREATE DATABASE ${name}`);
  cleanups.push(async () => {
    const c = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
    await c.query(`DROP DATABASE IF EXISTS ${name}`);
    await c.end();
  });
  await root.query(`USE ${name}`);
  for (const s of ddl(f)) await root.query(s);
  for (const r of inserts(f, upstreamUrl)) await root.query(r.sql, r.params);
  await root.end();
  return `mysql://root@127.0.0.1:3306/${name}`;
}

let fake: FakeUpstream;
let gw: RunningGateway;
let configFile: string;
const fixtures: { f: Fixture; url: string; report: Record<string, any>; channelsFile: string }[] = [];

const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { cwd: ROOT, env: { ...process.env, SECRETS_KEY, GATEWAY_CONFIG: configFile } });

async function importOnce(f: Fixture, url: string, ...extra: string[]) {
  const channelsFile = path.join(dir, `channels-${f.tag}.yaml`);
  const { stdout } = await cli('import', '--from', f.flavor, '--database-url', url, '--channels-out', channelsFile, ...extra);
  return { report: JSON.parse(stdout) as Record<string, any>, channelsFile };
}

beforeAll(async () => {
  fake = await startFakeUpstream();
  pgAdmin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await pgAdmin.connect();
  const base = testConfig({ openaiUrls: [fake.url], channelPrefix: 'imp-' });
  configFile = writeConfig(base);
  const plan: [Flavor, Dialect][] = [
    ['new-api', 'sqlite'],
    ['new-api', 'postgres'],
    ['new-api', 'mysql'],
    ['one-api', 'sqlite'],
    ['one-api', 'mysql'],
  ];
  for (const [flavor, dialect] of plan) {
    const f = newFixture(flavor, dialect);
    const url = await createFixture(f, fake.url);
    // A dry run first: it reports the plan and writes nothing.
    const dry = await importOnce(f, url, '--dry-run');
    expect(dry.report.dryRun).toBe(true);
    expect(dry.report.users.imported).toBe(2);
    expect(await (await getDb()).user.findUnique({ where: { email: f.aliceEmail } })).toBeNull();
    const { report, channelsFile } = await importOnce(f, url);
    fixtures.push({ f, url, report, channelsFile });
  }
  // The gateway serves the channels the first import wrote (encrypted keys), ahead of the fixture's.
  const imported = YAML.parse(readFileSync(fixtures[0].channelsFile, 'utf8')) as { channels: Record<string, unknown>[] };
  const cfg = testConfig({ openaiUrls: [fake.url], channelPrefix: 'imp-' });
  (cfg.channels as unknown[]).unshift(...imported.channels.map((c) => ({ ...c, timeouts: { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 } })));
  gw = await startGateway({ config: cfg, env: { SECRETS_KEY } });
}, 400_000);

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  for (const c of cleanups) await c().catch(() => undefined);
  await pgAdmin?.end();
});

const chat = (key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });

describe.each([0, 1, 2, 3, 4])('import fixture %i', (i) => {
  it('brings accounts, balances, keys and codes over, and the old token works', async () => {
    const { f, report } = fixtures[i];
    const db = await getDb();
    expect(report.users).toMatchObject({ imported: 2, skipped: 1 });
    const alice = await db.user.findUniqueOrThrow({ where: { email: f.aliceEmail } });
    expect(alice.balanceUsd.toFixed(12)).toBe('5.000000000000');
    expect(await bcrypt.compare(f.alicePassword, alice.passwordHash)).toBe(true);
    const bob = await db.user.findUniqueOrThrow({ where: { email: `bob${f.tag}@imported.invalid` } });
    expect(bob.balanceUsd.toFixed(12)).toBe('2.000000000000');
    expect(bob.role).toBe('user');
    expect(report.users.passwordResetNeeded).toEqual([`bob${f.tag}@imported.invalid`]);
    // Keys: two kept under their string, the odd one re-issued (listed old → new), the disabled one skipped.
    expect(report.tokens).toMatchObject({ kept: 2, reissued: 1, skipped: 1 });
    expect(report.tokens.reissuedKeys).toHaveLength(1);
    expect(report.tokens.reissuedKeys[0].new).toMatch(/^sk-gw-/);
    const bobKey = await db.apiKey.findFirstOrThrow({ where: { userId: bob.id } });
    expect(bobKey.budgetUsd?.toFixed(12)).toBe('1.000000000000');
    // The old token calls the gateway; the imported account pays.
    const res = await chat(`sk-${f.aliceKey}`);
    expect(res.status).toBe(200);
    const reissued = await chat(report.tokens.reissuedKeys[0].new);
    expect(reissued.status).toBe(200);
    // The unused code is redeemable here under the same string; the used one was not brought over.
    expect(report.redemptions).toMatchObject({ imported: 1, skipped: 1 });
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.45.0.${i + 1}` },
      body: JSON.stringify({ email: f.aliceEmail, password: f.alicePassword }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const redeem = await fetch(`${gw.url}/api/payment/redeem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, origin: gw.url },
      body: JSON.stringify({ code: f.code }),
    });
    expect(redeem.status).toBe(200);
    expect(((await redeem.json()) as { credited_usd: string }).credited_usd).toBe('2');
    // Channels: the OpenAI one written (its unknown model left out), Azure skipped.
    expect(report.channels).toMatchObject({ written: 1, skipped: 1 });
  });

  it('a second run duplicates nothing', async () => {
    const { f, url } = fixtures[i];
    const db = await getDb();
    const before = (await db.user.findUniqueOrThrow({ where: { email: f.aliceEmail } })).balanceUsd.toFixed(12);
    const { report } = await importOnce(f, url);
    expect(report.users.imported).toBe(0);
    expect(report.tokens.kept + report.tokens.reissued).toBe(0);
    expect(report.redemptions.imported).toBe(0);
    expect(report.users.items.filter((u: { action: string }) => u.action === 'exists')).toHaveLength(2);
    const alice = await db.user.findUniqueOrThrow({ where: { email: f.aliceEmail } });
    expect(await db.apiKey.count({ where: { userId: alice.id } })).toBe(2);
    // Not credited again ($5 imported, $2 redeemed, less the two requests above).
    expect(alice.balanceUsd.toFixed(12)).toBe(before);
    expect(Number(before)).toBeGreaterThan(6.99);
  });
});

it('the imported channel carries the upstream key, decrypted by the gateway', async () => {
  const f = fixtures[0].f;
  const seen = fake.requests.filter((r) => r.headers.authorization === `Bearer ${f.channelKey}`);
  expect(seen.length).toBeGreaterThan(0);
  const text = readFileSync(fixtures[0].channelsFile, 'utf8');
  expect(text).not.toContain(f.channelKey);
  expect(text).toContain('api_key_encrypted: v1.');
});

import { describe, it, expect } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { startGateway, testConfig, ROOT } from '../support/gateway';
import { startFakeUpstream } from '../support/fake-upstream';

describe('embedded database', () => {
  it('starts with no DATABASE_URL or REDIS_URL, on PGlite under DATA_DIR, and serves registration and keys', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-embedded-'));
    const fake = await startFakeUpstream();
    const gw = await startGateway({
      config: testConfig({ openaiUrls: [fake.url], overrides: { starting_balance_usd: '1' } }),
      env: { DATABASE_URL: '', REDIS_URL: '', DATA_DIR: dataDir },
    });
    try {
      expect(gw.output()).toMatch(/"database":"embedded"/);
      const reg = await fetch(`${gw.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'embedded@example.com', password: 'sturdy-pass-42' }),
      });
      expect(reg.status).toBe(201);
      const cookie = reg.headers.get('set-cookie')!.split(';')[0];
      const key = await fetch(`${gw.url}/api/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie, origin: gw.url },
        body: '{"name":"local"}',
      });
      expect(key.status).toBe(201);
      const { key: apiKey } = await key.json();
      const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(models.status).toBe(200);
      expect((await models.json()).data.length).toBeGreaterThan(0);

      // A billed call: its log row and usage charge are written by the batch writer to PGlite.
      const chat = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(chat.status).toBe(200);
      const cost = chat.headers.get('x-service-cost-usd')!;
      let logs: { data: { cost_usd: string }[] } = { data: [] };
      for (let i = 0; i < 40 && logs.data.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        logs = await (await fetch(`${gw.url}/api/logs`, { headers: { cookie } })).json();
      }
      expect(logs.data).toHaveLength(1);
      expect(logs.data[0].cost_usd).toBe(cost);
      const me = await (await fetch(`${gw.url}/api/me`, { headers: { cookie } })).json();
      expect(Number(me.user.balance_usd)).toBeCloseTo(1 - Number(cost), 12);

      // The request log is partitioned by day on PGlite too: the server created today's partition
      // and the days ahead at start, and the row is in today's (read once the server let go).
      expect(await gw.stop()).toBe(0);
      const db = await PGlite.create(path.join(dataDir, 'pglite'));
      try {
        const { rows } = await db.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM "RequestLog"`);
        expect(rows).toEqual([{ p: `"RequestLog_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}"` }]);
        const parts = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = '"RequestLog"'::regclass`);
        expect(parts.rows[0].n).toBe(1 + 1 + 7); // the default, today, and REQUEST_LOG_PARTITIONS_AHEAD days
      } finally {
        await db.close();
      }
    } finally {
      expect(await gw.stop()).toBe(0);
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('a second process (the admin CLI) is refused while the server holds the embedded database, and nothing is written; a dead holder does not block', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-embedded-'));
    const fake = await startFakeUpstream();
    const env = { DATABASE_URL: '', REDIS_URL: '', DATA_DIR: dataDir };
    const cli = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
          cwd: ROOT,
          env: { ...process.env, ...env },
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    let gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], overrides: { starting_balance_usd: '0' } }), env });
    try {
      const reg = await fetch(`${gw.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'lock@example.com', password: 'sturdy-pass-42' }),
      });
      expect(reg.status).toBe(201);
      const cookie = reg.headers.get('set-cookie')!.split(';')[0];
      const balance = async () => (await (await fetch(`${gw.url}/api/me`, { headers: { cookie } })).json()).user.balance_usd;
      const before = await balance();
      const lock = path.join(dataDir, 'pglite.lock');
      expect(readFileSync(lock, 'utf8').trim()).toBe(String(gw.process.pid));

      const refused = await cli('credit', '--email', 'lock@example.com', '--usd', '5');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`error: the server (pid ${gw.process.pid}) holds the embedded database`);
      expect(refused.stderr).toMatch(/stop it first or set DATABASE_URL/);
      expect(refused.stdout).toBe('');
      expect(await balance()).toBe(before);

      // SIGKILL leaves the lock behind; its process is gone, so it does not block the next opener.
      gw.process.kill('SIGKILL');
      await new Promise((r) => gw.process.once('exit', r));
      expect(existsSync(lock)).toBe(true);
      const credited = await cli('credit', '--email', 'lock@example.com', '--usd', '5');
      expect(credited.code).toBe(0);
      expect(JSON.parse(credited.stdout.trim().split('\n').at(-1)!).balanceUsd).toBe('5.000000000000');
      expect(existsSync(lock)).toBe(false); // released at exit

      // The server started again has it (it reads the database).
      gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env });
      const login = await fetch(`${gw.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'lock@example.com', password: 'sturdy-pass-42' }),
      });
      const cookie2 = login.headers.get('set-cookie')!.split(';')[0];
      const me = await (await fetch(`${gw.url}/api/me`, { headers: { cookie: cookie2 } })).json();
      expect(Number(me.user.balance_usd)).toBe(5);
    } finally {
      await gw.stop();
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

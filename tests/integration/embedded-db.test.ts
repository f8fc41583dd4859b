import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, testConfig } from '../support/gateway';
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
      const key = await fetch(`${gw.url}/api/keys`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: '{"name":"local"}' });
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
    } finally {
      expect(await gw.stop()).toBe(0);
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

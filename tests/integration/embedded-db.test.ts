import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, testConfig } from '../support/gateway';

describe('embedded database', () => {
  it('starts with no DATABASE_URL or REDIS_URL, on PGlite under DATA_DIR, and serves registration and keys', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-embedded-'));
    const gw = await startGateway({
      config: testConfig({ openaiUrls: ['http://127.0.0.1:9'] }),
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
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  }, 90_000);
});

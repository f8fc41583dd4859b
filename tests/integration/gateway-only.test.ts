import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor } from '../support/accounts';

// GATEWAY_ONLY=1 (npm run start:gateway): /v1 and the ops endpoints without the Next.js app.
describe('GATEWAY_ONLY=1', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream();
    gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url] }), env: { GATEWAY_ONLY: '1', METRICS_TOKEN: 'metrics-token-1' } });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it('serves and bills /v1, answers the ops endpoints, and 404s the dashboard and /api in the OpenAI envelope', async () => {
    expect(gw.output()).toMatch(/"gatewayOnly":true/);
    const account = await createAccount({ balanceUsd: '1' });
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(chat.status).toBe(200);
    const cost = chat.headers.get('x-service-cost-usd')!;
    await waitFor(async () => Number(await balanceOf(account.userId)) < 1, 10_000);
    expect(Number(await balanceOf(account.userId))).toBeCloseTo(1 - Number(cost), 12);

    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    for (const p of ['/', '/api/me', '/dashboard']) {
      const res = await fetch(`${gw.url}${p}`);
      expect(res.status).toBe(404);
      const body = await res.json();
      expect(body.error).toMatchObject({ type: 'not_found_error', param: null, code: 'not_found' });
    }
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-1' } })).text();
    expect(metrics).toMatch(/^nodejs_eventloop_delay_max_seconds \d/m);
    expect(metrics).toMatch(/^nodejs_eventloop_delay_p99_seconds \d/m);
  }, 60_000);

  it('stops cleanly on SIGTERM', async () => {
    expect(await gw.stop()).toBe(0);
  });
});

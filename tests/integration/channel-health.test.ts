// Channel health against two built gateways sharing Redis and two fake upstreams: one upstream
// starts failing (healthy → degraded → failed), traffic moves off it, scheduled probes reach it,
// it comes back by itself (recovering → healthy) once the fake heals; every change reaches the
// operator's webhook receiver signed, once; both instances see the same state, which neither
// could have reached from its own attempts alone; the console shows state, reason and samples.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { startGateway, testConfig, ROOT, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor } from '../support/accounts';
import { verifyWebhook } from '@/lib/alerts/signing';

const run = promisify(execFile);
const adminEmail = `health-${randomBytes(4).toString('hex')}@example.com`;
const password = 'sturdy-pass-42';
const SECRET = 'whsec_' + randomBytes(32).toString('base64');
// Unique channel names: the state lives in the shared Redis under the channel's name.
const prefix = `hl${randomBytes(3).toString('hex')}-`;
const ch1 = `${prefix}openai-1`;
const ch2 = `${prefix}openai-2`;

let gws: RunningGateway[] = [];
let fake1: FakeUpstream;
let fake2: FakeUpstream;
let hook: Server;
let hookUrl = '';
const events: { state: string; from: string; channel: string; id: string }[] = [];
let ipCounter = 0;
const freshIp = () => `10.45.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;
let cookie = '';
let apiKey = '';

interface HealthRow {
  name: string;
  health: {
    state: string;
    since: string | null;
    reason: { code: string; requests?: number; errorRate?: number; probes?: number } | null;
    samples: { status: number | null; error: string; counted: boolean; probe?: boolean }[];
  };
}

async function channels(gw: RunningGateway): Promise<Map<string, HealthRow['health']>> {
  const res = await fetch(`${gw.url}/api/admin/channels`, { headers: { cookie, 'x-forwarded-for': freshIp() } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: HealthRow[] };
  return new Map(body.data.map((r) => [r.name, r.health]));
}

/** Waits until every instance reports `state` for channel 1. */
async function everywhere(state: string, timeoutMs = 20_000) {
  return waitFor(async () => {
    const views = await Promise.all(gws.map(channels));
    return views.every((v) => v.get(ch1)?.state === state) ? views : null;
  }, timeoutMs);
}

function chat(gw: RunningGateway) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

const probesOf = (f: FakeUpstream) =>
  f.requests.filter((r) => (r.json as { max_tokens?: number; messages?: { content: string }[] } | undefined)?.messages?.[0]?.content === 'ping').length;
const trafficOf = (f: FakeUpstream) => f.requests.length - probesOf(f);

beforeAll(async () => {
  fake1 = await startFakeUpstream();
  fake2 = await startFakeUpstream();
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      try {
        const event = verifyWebhook(SECRET, req.headers as Record<string, string>, body) as {
          type: string;
          data: { channel: string; from: string; to: string };
        };
        const id = req.headers['webhook-id'] as string;
        if (event.type === 'channel.health_changed' && !events.some((e) => e.id === id))
          events.push({ state: event.data.to, from: event.data.from, channel: event.data.channel, id });
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/hooks`;
  const config = testConfig({
    channelPrefix: prefix,
    openaiUrls: [fake1.url, fake2.url],
    overrides: {
      // The per-instance breaker is kept out of the way: the states alone move the traffic here.
      circuit_breaker: { failures: 1_000_000, cooldown_ms: 1000 },
      channel_health: {
        window_ms: 120_000,
        min_requests: 4,
        degraded_error_rate: 0.25,
        failed_error_rate: 0.6,
        probe_interval_ms: 400,
        recover_after: 2,
        recovering_share: 0,
        webhook_url: hookUrl,
        webhook_secret_env: 'HEALTH_HOOK_SECRET',
      },
    },
  }) as { channels: Record<string, unknown>[] };
  // Per-channel thresholds: channel 2 is never judged (its failures below only push traffic to channel 1).
  config.channels[1].health = { min_requests: 100_000 };
  const env = { TRUST_PROXY: '1', ADMIN_EMAILS: adminEmail, HEALTH_HOOK_SECRET: SECRET };
  gws = await Promise.all([startGateway({ config, env }), startGateway({ config, env })]);
  await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'create-user', '--email', adminEmail, '--password', password], {
    cwd: ROOT,
    env: { ...process.env, ADMIN_EMAILS: adminEmail },
  });
  const login = await fetch(`${gws[0].url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp() },
    body: JSON.stringify({ email: adminEmail, password }),
  });
  expect(login.status).toBe(200);
  cookie = login.headers.get('set-cookie')!.split(';')[0];
  apiKey = (await createAccount({ balanceUsd: '5' })).apiKey;
}, 180_000);

afterAll(async () => {
  await Promise.all(gws.map((g) => g.stop()));
  await Promise.all([fake1?.close(), fake2?.close()]);
  await new Promise((r) => hook?.close(r));
});

describe('channel health', { timeout: 120_000 }, () => {
  it('degraded from the window shared by two instances, then failed; traffic moves, probes bring it back by itself; signed webhooks', async () => {
    // Both start healthy, with no reason yet.
    for (const v of await Promise.all(gws.map(channels))) expect(v.get(ch1)).toMatchObject({ state: 'healthy', reason: null });

    // Six requests, three through each instance: 2 of channel 1's 6 answers fail (33%: degraded).
    // Neither instance alone saw min_requests (4) attempts: the window is shared.
    const s500 = { type: 'status', status: 500 } as const;
    const ok = { type: 'ok' } as const;
    // The failures come last: no prefix of four or five answers reaches 25%, so the state cannot
    // change (and move traffic) before all six are in, however slow the machine.
    fake1.queue(ok, ok, ok, ok, s500, s500);
    for (let i = 0; i < 6; i++) expect((await chat(gws[i % 2])).status).toBe(200);
    expect(trafficOf(fake1)).toBe(6);
    const degraded = await everywhere('degraded');
    expect(degraded[0].get(ch1)!.reason).toMatchObject({ code: 'error_rate' });
    expect(degraded[1].get(ch1)!.since).toBe(degraded[0].get(ch1)!.since);
    // Its recent errors, from both instances, as the console shows them (an instance's samples reach
    // the shared store on its next tick, which a loaded machine may run after the state changed).
    const counted500 = (v: Map<string, HealthRow['health']>) => v.get(ch1)!.samples.filter((s) => s.status === 500 && s.counted).length;
    await waitFor(async () => counted500(await channels(gws[0])) >= 2, 10_000);
    expect(counted500(await channels(gws[0]))).toBe(2);
    expect(degraded[0].get(ch2)!.state).toBe('healthy');

    // Traffic moves: healthy channel 2 first, on both instances.
    for (let i = 0; i < 4; i++) expect((await chat(gws[i % 2])).status).toBe(200);
    expect(trafficOf(fake1)).toBe(6);

    // Channel 2 stumbles: requests fall back to degraded channel 1, which now fails every time
    // (each request tries both channels for gpt-4o-mini, then both for its fallback model).
    fake1.setDefault(s500);
    fake2.setDefault(s500);
    for (let i = 0; i < 2; i++) expect((await chat(gws[i % 2])).status).toBe(502);
    fake2.setDefault(ok);
    expect(trafficOf(fake1)).toBe(10);
    const failed = await everywhere('failed');
    expect(failed[1].get(ch1)!.reason).toMatchObject({ code: 'error_rate', requests: 10, errorRate: 0.6 });

    // Failed: no traffic while channel 2 serves; the probes (one output token, "ping") reach it.
    const probesBefore = probesOf(fake1);
    for (let i = 0; i < 4; i++) expect((await chat(gws[i % 2])).status).toBe(200);
    expect(trafficOf(fake1)).toBe(10);
    await waitFor(async () => probesOf(fake1) >= probesBefore + 2, 15_000);
    const probe = [...fake1.requests].reverse().find((r) => (r.json as { max_tokens?: number } | undefined)?.max_tokens === 1)!;
    expect(probe.path).toBe('/v1/chat/completions');
    // Failing probes keep it failed and show up among its samples.
    await waitFor(async () => (await channels(gws[0])).get(ch1)!.samples.some((s) => s.probe && s.status === 500), 10_000);
    expect((await channels(gws[1])).get(ch1)!.state).toBe('failed');

    // The upstream heals: probes pass, recovering, then healthy after 2 in a row; no operator action.
    fake1.setDefault(ok);
    const healthy = await everywhere('healthy', 30_000);
    expect(healthy[0].get(ch1)!.reason).toMatchObject({ code: 'probes_passed', probes: 2 });
    // And it takes traffic again (priority 10 over channel 2's 9).
    const before = trafficOf(fake1);
    expect((await chat(gws[0])).status).toBe(200);
    expect(trafficOf(fake1)).toBe(before + 1);

    // The operator's receiver got each change once, signed (verifyWebhook refused nothing).
    await waitFor(async () => events.filter((e) => e.channel === ch1).length >= 4, 10_000);
    expect(events.filter((e) => e.channel === ch1).map((e) => `${e.from}→${e.state}`)).toEqual([
      'healthy→degraded',
      'degraded→failed',
      'failed→recovering',
      'recovering→healthy',
    ]);
    expect(events.filter((e) => e.channel === ch2)).toEqual([]);

    // Upstream 429s are the upstream's load, not the channel's health: samples, never counted.
    fake1.setDefault({ type: 'status', status: 429 });
    for (let i = 0; i < 6; i++) expect((await chat(gws[i % 2])).status).toBe(200);
    fake1.setDefault(ok);
    const limited = await waitFor(async () => {
      const h = (await channels(gws[0])).get(ch1)!;
      return h.samples.filter((s) => s.status === 429).length >= 6 ? h : null;
    }, 10_000);
    expect(limited.samples.filter((s) => s.status === 429).every((s) => !s.counted)).toBe(true);
    await new Promise((r) => setTimeout(r, 2500)); // two ticks
    expect((await channels(gws[1])).get(ch1)!.state).toBe('healthy');
    expect(events.filter((e) => e.channel === ch1)).toHaveLength(4);
  });

  it('the console page shows each channel state, reason and recent errors, in English and Chinese', async () => {
    const page = (lang: string) =>
      fetch(`${gws[1].url}/admin/channels`, { headers: { cookie: `${cookie}; lang=${lang}`, 'x-forwarded-for': freshIp() } }).then((r) => r.text());
    const en = await page('en');
    expect(en).toContain('Channel health');
    expect(en).toMatch(/2 probes passed in a row\./);
    expect(en).toMatch(/Recent errors \(\d+\)/);
    expect(en).toContain('upstream rate-limited or overloaded (429)');
    expect(en).toContain('not counted');
    const zh = await page('zh-CN');
    expect(zh).toContain('渠道健康状态');
    expect(zh).toContain('连续 2 次探测通过。');
    expect(zh).toContain('正常');
    expect(zh).toContain('不计入');
  });
});

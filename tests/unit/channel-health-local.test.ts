// Channel health on one instance without Redis (the in-process store): attempts recorded on the
// hot path fail a channel at the next tick, the scheduled probe (through lib/gateway/upstream.ts)
// reaches the upstream, and it comes back by itself; config validation of channel_health.
import { describe, it, expect, vi, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import { buildConfig, ConfigError, type GatewayConfig } from '@/lib/config';
import { resetSingleton, singleton } from '@/lib/singleton';
import { testConfig } from '../support/gateway';

vi.mock('@/lib/redis-client', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/lib/redis-client')>()),
  redisConfigured: () => false,
}));

const { healthOf, healthSnapshot, healthTick, recordHealth } = await import('@/lib/channels/health');
// The server hands the health loop the gateway's probe at start (startChannelOverrideSync): so does this test.
const { setChannelProbe } = await import('@/lib/channels/prober');
setChannelProbe((await import('@/lib/gateway/probe')).probeChannel);

let server: Server;
let answer = 500;
const seen: { path: string; body: { max_tokens?: number } }[] = [];
let cfg: GatewayConfig;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body: JSON.parse(body) as { max_tokens?: number } });
      res.writeHead(answer, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', choices: [] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  cfg = buildConfig(
    testConfig({
      channelPrefix: 'local-',
      openaiUrls: [url],
      overrides: { channel_health: { window_ms: 10_000, min_requests: 3, failed_error_rate: 0.5, probe_interval_ms: 100, recover_after: 2 } },
    }),
    'test.yaml',
  );
  resetSingleton('config');
  singleton('config', () => cfg);
});

afterAll(async () => {
  resetSingleton('config');
  await new Promise((r) => server.close(r));
});

async function until(state: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (healthOf('local-openai-1') !== state) {
    if (Date.now() > deadline) throw new Error(`still ${healthOf('local-openai-1')}, wanted ${state}`);
    await healthTick();
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('channel health without Redis', () => {
  it('fails from recorded attempts at the next tick; probes bring it back by itself', async () => {
    const channel = cfg.channels[0];
    recordHealth(channel, true, 40);
    recordHealth(channel, false, 0, { status: 502, error: 'upstream answered 502' });
    // A 429 is a sample, never a count.
    recordHealth(channel, null, 10, { status: 429, error: 'upstream rate-limited or overloaded (429)' });
    await healthTick();
    expect(healthOf(channel.name)).toBe('healthy');
    recordHealth(channel, false, 0, { status: 500, error: 'upstream answered 500' });
    await healthTick();
    expect(healthOf(channel.name)).toBe('failed');
    const view = healthSnapshot().get(channel.name)!;
    expect(view.reason).toMatchObject({ code: 'error_rate', requests: 3 });
    expect(view.samples.map((s) => [s.status, s.counted])).toEqual([
      [500, true],
      [429, false],
      [502, true],
    ]);

    // The probe: one output token of the channel's first chat model, on the chat path.
    await until('failed');
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) {
      await healthTick();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen[0]).toMatchObject({ path: '/v1/chat/completions', body: { max_tokens: 1 } });
    answer = 200;
    await until('recovering');
    await until('healthy');
    expect(healthSnapshot().get(channel.name)!.reason).toMatchObject({ code: 'probes_passed', probes: 2 });
  });

  it('refuses thresholds out of range and a webhook without its secret, naming the field', () => {
    const bad = (health: Record<string, unknown>) => {
      try {
        buildConfig(testConfig({ openaiUrls: ['http://127.0.0.1:1'], overrides: { channel_health: health } }), 'test.yaml');
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(bad({ failed_error_rate: 1.5 })).toMatch(/channel_health\.failed_error_rate/);
    expect(bad({ webhook_url: 'https://ops.example.com/h' })).toMatch(/channel_health\.webhook_secret_env/);
    expect(bad({ webhook_url: 'https://ops.example.com/h', webhook_secret_env: 'NOT_SET_ANYWHERE_45' })).toMatch(/NOT_SET_ANYWHERE_45 is not set/);
  });
});

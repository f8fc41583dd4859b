// A channel's own limits (concurrency, tokens per minute) as the operator console sees and sets them,
// against the built server: the admin API shows each channel's limits, where they come from and what
// they hold now (requests in flight, tokens this minute, across instances through Redis); a change
// is validated naming the field (coded, for the console's two languages), audited, and routing
// follows it at once; null goes back to the operator config's.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../support/fake-upstream';
import { createAccount, createOperator, signIn, waitFor, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';

// Unique channel names: overrides and limit counters live in the shared Redis under the channel's name.
const prefix = `cl${randomBytes(3).toString('hex')}-`;
const ch1 = `${prefix}openai-1`;
const ch2 = `${prefix}openai-2`;

let gw: RunningGateway;
let one: FakeUpstream;
let two: FakeUpstream;
let operator = '';
let customer: TestAccount;
let ip = 0;
const freshIp = () => `10.46.${Math.floor(++ip / 250)}.${ip % 250}`;

/** Requests whose text says "hold" are answered after a pause: they keep their place meanwhile. */
const holding = (req: RecordedRequest) => (req.body.includes('hold') ? { type: 'delay' as const, ms: 2_000 } : undefined);

interface Limit {
  limit: number | null;
  config: number | null;
  override: number | null;
  current: number | null;
}

function admin(method: 'GET' | 'POST', path: string, body?: unknown, cookie = operator) {
  const headers: Record<string, string> = { origin: gw.url, cookie, 'x-forwarded-for': freshIp() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${gw.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function limitsOf(name: string): Promise<{ concurrency: Limit; tpm: Limit }> {
  const res = await admin('GET', '/api/admin/channels');
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: { name: string; limits: { concurrency: Limit; tpm: Limit } }[] };
  return data.find((c) => c.name === name)!.limits;
}

const setLimits = (name: string, body: unknown) => admin('POST', `/api/admin/channels/${name}`, body);

function chat(text: string) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], max_tokens: 100 }),
  });
}

beforeAll(async () => {
  [one, two] = await Promise.all([startFakeUpstream({ faultFor: holding }), startFakeUpstream({ faultFor: holding })]);
  const config = testConfig({ openaiUrls: [one.url, two.url], channelPrefix: prefix, overrides: { limits: { login_per_ip_per_minute: 10_000 } } });
  (config.channels as { name: string; concurrency?: number }[])[0].concurrency = 2;
  gw = await startGateway({ config, env: { TRUST_PROXY: '1' } });
  const [op, c] = await Promise.all([createOperator(), createAccount({ tier: 'pro', balanceUsd: '5' })]);
  customer = c;
  operator = await signIn(gw.url, op, { 'x-forwarded-for': freshIp() });
}, 120_000);

afterAll(async () => {
  if (gw) await setLimits(ch1, { concurrency: null, tpm: null }).catch(() => undefined);
  await gw?.stop();
  await Promise.all([one?.close(), two?.close()]);
});

describe('channel limits in the admin API', () => {
  it("lists each channel's limits, where they come from, and the requests in flight now", async () => {
    expect(await limitsOf(ch1)).toEqual({
      concurrency: { limit: 2, config: 2, override: null, current: 0 },
      tpm: { limit: null, config: null, override: null, current: null },
    });
    expect((await limitsOf(ch2)).concurrency).toEqual({ limit: null, config: null, override: null, current: null });
    const held = chat('hold');
    await waitFor(async () => (await limitsOf(ch1)).concurrency.current === 1, 5_000);
    expect((await held).status).toBe(200);
    await waitFor(async () => (await limitsOf(ch1)).concurrency.current === 0, 5_000);
  });

  it('refuses a bad value with a 400 naming the field, coded for the console; an unknown channel 404, a user 403', async () => {
    for (const [body, field] of [
      [{ concurrency: 0 }, 'concurrency'],
      [{ concurrency: 100_001 }, 'concurrency'],
      [{ tpm: 1.5 }, 'tpm'],
      [{ tpm: '5000' }, 'tpm'],
      [{ concurrency: 3, tpm: -1 }, 'tpm'],
    ] as const) {
      const res = await setLimits(ch1, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const { error } = (await res.json()) as { error: { param: string; message: string; message_code: string; params: { field: string } } };
      expect(error).toMatchObject({ param: field, message_code: 'admin.channel_limit', params: { field } });
      expect(error.message).toMatch(new RegExp(`^${field} must be a whole number from 1 to`));
    }
    // Nothing was changed by the refusals (the valid concurrency beside a bad tpm included).
    expect((await limitsOf(ch1)).concurrency.limit).toBe(2);
    expect((await setLimits(`${prefix}nope`, { concurrency: 1 })).status).toBe(404);
    expect((await setLimits(ch1, {})).status).toBe(400);
    const user = await signIn(gw.url, customer, { 'x-forwarded-for': freshIp() });
    expect((await admin('POST', `/api/admin/channels/${ch1}`, { concurrency: 1 }, user)).status).toBe(403);
  });

  it('sets concurrency and tokens per minute over the config: audited, routing follows at once, the usage shows; null goes back to the config', async () => {
    const res = await setLimits(ch1, { concurrency: 1, tpm: 50_000 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ channel: ch1, concurrency: 1, tpm: 50_000, disabled: false });
    const audit = await (
      await getDb()
    ).auditLog.findFirst({ where: { targetType: 'channel', targetId: ch1, action: 'channel.set_limits' }, orderBy: { id: 'desc' } });
    expect(audit).toMatchObject({ before: { concurrency: null, tpm: null }, after: { concurrency: 1, tpm: 50_000 } });

    // One place now: a request held on the first channel sends the next one to the second.
    one.reset();
    two.reset();
    const held = chat('hold');
    await waitFor(async () => one.requests.length === 1, 5_000);
    const next = await chat('hi');
    expect(next.status).toBe(200);
    expect(next.headers.get('x-service-provider')).toBe(ch2);
    const during = await limitsOf(ch1);
    expect(during.concurrency).toEqual({ limit: 1, config: 2, override: 1, current: 1 });
    // The held request's reservation (its prompt bound and max_tokens) counts this minute.
    expect(during.tpm).toMatchObject({ limit: 50_000, config: null, override: 50_000 });
    expect(during.tpm.current).toBeGreaterThan(100);
    expect((await held).status).toBe(200);
    // Settled to what it used once it ended: still counted this minute, below the reservation.
    await waitFor(async () => {
      const after = await limitsOf(ch1);
      return after.concurrency.current === 0 && after.tpm.current! > 0 && after.tpm.current! < during.tpm.current!;
    }, 5_000);

    expect((await setLimits(ch1, { concurrency: null, tpm: null })).status).toBe(200);
    expect(await limitsOf(ch1)).toEqual({
      concurrency: { limit: 2, config: 2, override: null, current: 0 },
      tpm: { limit: null, config: null, override: null, current: null },
    });
    // Two places again: two held requests both go to the first channel.
    one.reset();
    const both = await Promise.all([chat('hold'), chat('hold')]);
    expect(both.map((r) => r.headers.get('x-service-provider'))).toEqual([ch1, ch1]);
  });
});

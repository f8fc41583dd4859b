// Unit-level pins for #26 items 13 and 18: the CSV export body aborts (never ends cleanly) when
// its source fails mid-way, and the per-account login throttle is a sliding window, not a lock,
// in Redis and in-process alike.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { csvStream } from '@/lib/dashboard/csv-stream';
import {
  beginLoginAttempt,
  LOGIN_FAILURE_WINDOW_MS,
  LOGIN_FAILURES_PER_IP,
  MemoryThrottleStore,
  RedisThrottleStore,
  type ThrottleStore,
} from '@/lib/auth/login-throttle';
import { GatewayError } from '@/lib/errors';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
afterAll(() => redis.disconnect());

async function* chunks(failAfter: number) {
  yield 'id,created_at\r\n';
  for (let i = 0; i < failAfter; i++) yield `row${i},2026-01-01\r\n`;
  throw new Error('database went away');
}

describe('csvStream', () => {
  it('a failure before the first byte is thrown to the route (an ordinary error answer)', async () => {
    await expect(csvStream(chunks(0), () => undefined)).rejects.toThrow(/went away/);
  });

  it('a failure after the first bytes errors the stream, so the download fails instead of ending as if complete', async () => {
    const errors: unknown[] = [];
    const body = await csvStream(chunks(3), (e) => errors.push(e));
    const reader = body.getReader();
    const got: string[] = [];
    const decoder = new TextDecoder();
    const readAll = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'ended';
        got.push(decoder.decode(value));
      }
    };
    await expect(readAll()).rejects.toThrow(/went away/);
    expect(got.join('')).toContain('row2');
    expect(errors).toHaveLength(1);
  });

  it('a source that ends normally ends the stream normally', async () => {
    async function* ok() {
      yield 'a\r\n';
      yield 'b\r\n';
      yield 'c\r\n';
    }
    expect(await new Response(await csvStream(ok(), () => undefined)).text()).toBe('a\r\nb\r\nc\r\n');
  });
});

describe.each<[string, () => ThrottleStore]>([
  ['in-process', () => new MemoryThrottleStore()],
  ['Redis', () => new RedisThrottleStore(redis)],
])('login throttle (%s)', (_name, makeStore) => {
  it('refuses the 11th attempt after 10 failures, and lets sign-ins through again once the window has passed', async () => {
    const store = makeStore();
    const email = `throttle-${randomUUID()}@example.com`;
    const ip = `ip-${randomUUID()}`;
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) await beginLoginAttempt(email, ip, store, t0 + i * 1000);
    const refused = await beginLoginAttempt(email, ip, store, t0 + 60_000).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect((refused as GatewayError).retryAfterS).toBe(Math.ceil((LOGIN_FAILURE_WINDOW_MS - 60_000) / 1000));
    // The oldest failure leaves the window: one more attempt, not a permanent lock.
    await expect(beginLoginAttempt(email, ip, store, t0 + LOGIN_FAILURE_WINDOW_MS + 1)).resolves.toBeDefined();
    // All of them gone 15 minutes after the last: a full budget again.
    for (let i = 0; i < 10; i++) await beginLoginAttempt(email, ip, store, t0 + 2 * LOGIN_FAILURE_WINDOW_MS + 10_000 + i);
  });

  it('a successful attempt is uncounted', async () => {
    const store = makeStore();
    const email = `throttle-${randomUUID()}@example.com`;
    const ip = `ip-${randomUUID()}`;
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) await (await beginLoginAttempt(email, ip, store, t0 + i)).succeeded();
    for (let i = 0; i < 10; i++) await beginLoginAttempt(email, ip, store, t0 + 100 + i);
    await expect(beginLoginAttempt(email, ip, store, t0 + 200)).rejects.toMatchObject({ status: 429 });
  });

  it("failures from one address do not lock the account's owner out from another, nor the same account written another way", async () => {
    const store = makeStore();
    const email = `owner-${randomUUID()}@example.com`;
    const [attacker, owner] = [`ip-${randomUUID()}`, `ip-${randomUUID()}`];
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) await beginLoginAttempt(email, attacker, store, t0 + i);
    await expect(beginLoginAttempt(email, attacker, store, t0 + 20)).rejects.toMatchObject({ status: 429 });
    // The same mailbox spelt differently is the same budget for the attacker...
    await expect(beginLoginAttempt(` ${email.toUpperCase()}.`, attacker, store, t0 + 21)).rejects.toMatchObject({ status: 429 });
    // ...and the owner elsewhere is not throttled.
    await expect(beginLoginAttempt(email, owner, store, t0 + 22)).resolves.toBeDefined();
  });

  it('one address has a budget across accounts: spreading guesses over many emails is stopped too', async () => {
    const store = makeStore();
    const ip = `ip-${randomUUID()}`;
    const t0 = Date.now();
    for (let i = 0; i < LOGIN_FAILURES_PER_IP; i++) await beginLoginAttempt(`spray-${i}-${randomUUID()}@example.com`, ip, store, t0 + i);
    const refused = beginLoginAttempt(`fresh-${randomUUID()}@example.com`, ip, store, t0 + 100);
    await expect(refused).rejects.toMatchObject({ status: 429, message: expect.stringMatching(/from this address/) });
    await expect(beginLoginAttempt(`fresh-${randomUUID()}@example.com`, `ip-${randomUUID()}`, store, t0 + 100)).resolves.toBeDefined();
  });
});

// Budget alerts: webhook signing and verification (checked against the Standard Webhooks reference
// library), the idempotency id, the retry back-off, threshold arithmetic, and settings validation.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors';
import { alertEventId, generateSigningSecret, signWebhook, verifyWebhook, webhookHeaders, WebhookVerificationError } from '../../lib/alerts/signing';
import { isPrivateAddress } from '../../lib/alerts/webhook-url';
import { postWebhook, retryDelayMs } from '../../lib/alerts/deliver';
import { crossedThresholds } from '../../lib/alerts/evaluate';
import { parseAlertSettings } from '../../lib/alerts/settings';

const body = JSON.stringify({ id: 'evt_1', type: 'account.balance.low', data: { balance_usd: '0.5' } });

function paramOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) {
      expect(err.status).toBe(400);
      return err.param;
    }
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('webhook signatures', () => {
  it('signs `${id}.${timestamp}.${body}` with HMAC-SHA256 as the Standard Webhooks library does', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const at = new Date('2026-11-26T10:00:00Z');
    const reference = new Webhook(secret).sign('evt_1', at, body);
    expect(signWebhook(secret, 'evt_1', at.getTime() / 1000, body)).toBe(reference);
  });

  it('produces headers the reference library verifies, and verifies them itself', () => {
    const secret = generateSigningSecret();
    const headers = webhookHeaders(secret, 'evt_abc', body);
    expect(headers['webhook-id']).toBe('evt_abc');
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verifyWebhook(secret, headers, body)).toEqual(JSON.parse(body));
  });

  it('refuses a changed body, another secret, a changed id and a missing header', () => {
    const secret = generateSigningSecret();
    const headers = webhookHeaders(secret, 'evt_abc', body);
    expect(() => verifyWebhook(secret, headers, body.replace('0.5', '500'))).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(generateSigningSecret(), headers, body)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_other' }, body)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-signature': undefined }, body)).toThrow(/missing/);
  });

  it('refuses a timestamp more than 5 minutes away (replays), both ways', () => {
    const secret = generateSigningSecret();
    const sentAt = Date.parse('2026-11-26T10:00:00Z');
    const headers = webhookHeaders(secret, 'evt_abc', body, sentAt);
    expect(verifyWebhook(secret, headers, body, { nowMs: sentAt + 299_000 })).toBeTruthy();
    expect(() => verifyWebhook(secret, headers, body, { nowMs: sentAt + 301_000 })).toThrow(/too old/);
    expect(() => verifyWebhook(secret, headers, body, { nowMs: sentAt - 301_000 })).toThrow(/too old/);
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-timestamp': '1e9' }, body)).toThrow(/timestamp/);
  });

  it('accepts any one of several space-separated signatures (secret rotation)', () => {
    const [oldSecret, newSecret] = [generateSigningSecret(), generateSigningSecret()];
    const h = webhookHeaders(newSecret, 'evt_abc', body);
    const both = { ...h, 'webhook-signature': `${webhookHeaders(oldSecret, 'evt_abc', body)['webhook-signature']} ${h['webhook-signature']}` };
    expect(verifyWebhook(newSecret, both, body)).toBeTruthy();
    expect(verifyWebhook(oldSecret, both, body)).toBeTruthy();
  });
});

describe('idempotency ids', () => {
  it('are stable for the same crossing and differ for any other', () => {
    const a = alertEventId(['u1', 'key', 'k1', 'monthly', '2026-11', '10', 80]);
    expect(a).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(alertEventId(['u1', 'key', 'k1', 'monthly', '2026-11', '10', 80])).toBe(a);
    expect(alertEventId(['u1', 'key', 'k1', 'monthly', '2026-12', '10', 80])).not.toBe(a);
    expect(alertEventId(['u1', 'key', 'k1', 'monthly', '2026-11', '10', 100])).not.toBe(a);
  });
});

describe('retry back-off', () => {
  it('grows 4x per attempt from the base, with at most 10% jitter, capped at 6 hours', () => {
    expect(retryDelayMs(1, 30_000, 0)).toBe(30_000);
    expect(retryDelayMs(2, 30_000, 0)).toBe(120_000);
    expect(retryDelayMs(3, 30_000, 0)).toBe(480_000);
    expect(retryDelayMs(3, 30_000, 1)).toBe(528_000);
    expect(retryDelayMs(20, 30_000, 0)).toBe(6 * 3600_000);
    // The default 8 attempts span several hours (about a day with the cap and jitter).
    const total = [1, 2, 3, 4, 5, 6, 7].reduce((sum, n) => sum + retryDelayMs(n, 30_000, 0), 0);
    expect(total).toBeGreaterThan(12 * 3600_000);
  });
});

describe('thresholds', () => {
  it('are reached exactly at the percentage, in integer money', () => {
    const budget = 10_000_000_000_000n; // 10 USD in pico
    expect(crossedThresholds(4_999_999_999_999n, budget, [50, 80, 100])).toEqual([]);
    expect(crossedThresholds(5_000_000_000_000n, budget, [50, 80, 100])).toEqual([50]);
    expect(crossedThresholds(9_999_999_999_999n, budget, [50, 80, 100])).toEqual([50, 80]);
    expect(crossedThresholds(12_000_000_000_000n, budget, [50, 80, 100])).toEqual([50, 80, 100]);
  });
});

describe('settings validation', () => {
  it('normalises thresholds and amounts', () => {
    expect(parseAlertSettings({ thresholds: [100, 50, 80, 50], low_balance_usd: '2.50' })).toEqual({
      thresholds: [50, 80, 100],
      lowBalancePico: 2_500_000_000_000n,
    });
    expect(parseAlertSettings({ webhook_url: null, low_balance_usd: null })).toEqual({ webhookUrl: null, lowBalancePico: null });
    expect(parseAlertSettings({ webhook_url: 'https://hooks.example.com/x' })).toEqual({ webhookUrl: 'https://hooks.example.com/x' });
  });

  it.each([
    [{ thresholds: [0] }, 'thresholds'],
    [{ thresholds: [101] }, 'thresholds'],
    [{ thresholds: [50.5] }, 'thresholds'],
    [{ thresholds: 'fifty' }, 'thresholds'],
    [{ low_balance_usd: -1 }, 'low_balance_usd'],
    [{ low_balance_usd: '1e3' }, 'low_balance_usd'],
    [{ webhook_url: 'ftp://example.com/' }, 'webhook_url'],
    [{ webhook_url: 'not a url' }, 'webhook_url'],
    [{ webhook_url: 'https://user:pw@example.com/' }, 'webhook_url'],
    [{ webhook_url: 'http://127.0.0.1:8080/' }, 'webhook_url'],
    [{ webhook_url: 'http://[::1]/' }, 'webhook_url'],
    [{ webhook_url: 'http://169.254.169.254/latest/meta-data' }, 'webhook_url'],
    [{ webhook_url: 'http://localhost:3000/' }, 'webhook_url'],
  ])('refuses %j with 400 naming %s', (input, field) => {
    expect(paramOf(() => parseAlertSettings(input))).toBe(field);
  });
});

describe('private addresses', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is private', (a) => {
    expect(isPrivateAddress(a)).toBe(true);
  });
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (a) => {
    expect(isPrivateAddress(a)).toBe(false);
  });
});

describe('delivery to private addresses', () => {
  it('is refused for a literal loopback address and for a name resolving to one, before any request', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const secret = generateSigningSecret();
      expect(await postWebhook(`http://127.0.0.1:${port}/hook`, secret, 'evt_1', body)).toMatch(/127\.0\.0\.1 is private/);
      expect(await postWebhook(`http://localhost:${port}/hook`, secret, 'evt_1', body)).toMatch(/EPRIVATEADDRESS.*resolves to a private address/);
      expect(requests).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

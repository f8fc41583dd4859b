import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Webhook signatures in the Standard Webhooks scheme (https://www.standardwebhooks.com), so
// receivers can verify with its libraries in any language: HMAC-SHA256 keyed with the secret's
// bytes over `${webhook-id}.${webhook-timestamp}.${raw body}`, sent as `v1,<base64>`.

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes in base64. */
export function generateSigningSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** `v1,<base64 HMAC-SHA256>` of one delivery. */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery (its timestamp is the send time: each retry is signed afresh). */
export function webhookHeaders(secret: string, id: string, body: string, nowMs = Date.now()): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}

export class WebhookVerificationError extends Error {}

/**
 * Verifies a delivery as a receiver should: one of the space-separated `v1,` signatures matches
 * (compared in constant time) and the timestamp is within `toleranceS` of now (replays of old
 * deliveries are refused). Returns the parsed body.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
  opts: { toleranceS?: number; nowMs?: number } = {},
): unknown {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const ts = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(ts)) throw new WebhookVerificationError('bad webhook-timestamp');
  const now = Math.floor((opts.nowMs ?? Date.now()) / 1000);
  if (Math.abs(now - ts) > (opts.toleranceS ?? 300)) throw new WebhookVerificationError('webhook-timestamp too old or too new');
  const expected = Buffer.from(signWebhook(secret, id, ts, body));
  const match = signatures.split(' ').some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new WebhookVerificationError('no matching signature');
  return JSON.parse(body) as unknown;
}

/** The idempotency id of an alert: the same crossing gives the same id on every instance and every retry. */
export function alertEventId(parts: (string | number)[]): string {
  return 'evt_' + createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

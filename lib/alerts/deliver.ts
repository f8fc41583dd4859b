import { Agent, request } from 'undici';
import { getDb } from '@/lib/db';
import { backoffDelayMs } from '@/lib/backoff';
import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';
import { webhookHeaders } from '@/lib/alerts/signing';
import { openSecret } from '@/lib/alerts/settings';
import { assertDeliverableHost, guardedLookup } from '@/lib/alerts/webhook-url';

// Delivers due alert events to their account's webhook, at least once each: an event is claimed
// (its next attempt pushed past the delivery's timeout, so a crashed instance's claim is retried
// by another), POSTed signed, and marked delivered on a 2xx; any other outcome schedules a retry
// with exponential back-off until ALERT_MAX_ATTEMPTS, after which it is given up (still shown on
// the dashboard with its last error). The receiver de-duplicates on `webhook-id`.

const BATCH = 20;
const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

/** Delay before the retry that follows failed attempt number `attempt` (1-based): base × 4^(attempt−1), capped, +0–10 % jitter. */
export function retryDelayMs(attempt: number, baseMs = env.ALERT_RETRY_BASE_MS, random = Math.random()): number {
  return backoffDelayMs(attempt, { baseMs, factor: 4, maxMs: MAX_DELAY_MS, jitter: 0.1 }, random);
}

const agent = () =>
  singleton(
    'alert-webhook-agent',
    () =>
      new Agent({
        connect: { lookup: guardedLookup, timeout: env.ALERT_WEBHOOK_TIMEOUT_MS },
        headersTimeout: env.ALERT_WEBHOOK_TIMEOUT_MS,
        bodyTimeout: env.ALERT_WEBHOOK_TIMEOUT_MS,
        keepAliveTimeout: 4000,
      }),
  );

interface Claimed {
  id: string;
  payload: unknown;
  attempts: number;
  webhook_url: string | null;
  secret: string;
}

async function claimDue(now: Date): Promise<Claimed[]> {
  const db = await getDb();
  const lease = new Date(now.getTime() + env.ALERT_WEBHOOK_TIMEOUT_MS + 5000);
  return db.$queryRaw<Claimed[]>`
    UPDATE "AlertEvent" e SET attempts = e.attempts + 1, "nextAttemptAt" = ${lease}
    FROM "AlertSettings" s
    WHERE s."userId" = e."userId" AND e.id IN (
      SELECT id FROM "AlertEvent" WHERE "deliveredAt" IS NULL AND "nextAttemptAt" <= ${now}
      ORDER BY "nextAttemptAt" LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
    RETURNING e.id, e.payload, e.attempts, s."webhookUrl" AS webhook_url, s.secret`;
}

/** One signed POST; resolves to null on a 2xx, else the reason. */
export async function postWebhook(url: string, secret: string, id: string, body: string): Promise<string | null> {
  try {
    const target = new URL(url);
    assertDeliverableHost(target);
    const res = await request(target, {
      method: 'POST',
      headers: { ...webhookHeaders(secret, id, body), 'user-agent': 'model-gateway-webhooks/1' },
      body,
      dispatcher: agent(),
      signal: AbortSignal.timeout(env.ALERT_WEBHOOK_TIMEOUT_MS),
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return (e.code ? `${e.code}: ` : '') + (e.message || 'delivery failed').slice(0, 300);
  }
}

/** Delivers what is due now; returns how many were delivered. */
export async function deliverDueAlerts(now = new Date()): Promise<number> {
  const claimed = await claimDue(now);
  if (claimed.length === 0) return 0;
  const db = await getDb();
  const results = await Promise.all(
    claimed.map(async (c) => {
      let error: string | null;
      try {
        error = c.webhook_url ? await postWebhook(c.webhook_url, openSecret(c.secret), c.id, JSON.stringify(c.payload)) : 'no webhook URL';
      } catch {
        error = 'the signing secret could not be decrypted (SECRETS_KEY changed?)';
      }
      if (error === null) {
        await db.alertEvent.update({ where: { id: c.id }, data: { deliveredAt: new Date(), nextAttemptAt: null, lastError: null } });
        return true;
      }
      const giveUp = !c.webhook_url || c.attempts >= env.ALERT_MAX_ATTEMPTS;
      const next = giveUp ? null : new Date(Date.now() + retryDelayMs(c.attempts));
      await db.alertEvent.update({
        where: { id: c.id },
        data: { nextAttemptAt: next, lastError: giveUp && c.webhook_url ? `gave up after ${c.attempts} attempts: ${error}` : error },
      });
      return false;
    }),
  );
  return results.filter(Boolean).length;
}

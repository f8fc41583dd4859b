import { getDb } from '@/lib/db';
import { decryptSecret, encryptSecret } from '@/lib/crypto';
import { fieldError, GatewayError } from '@/lib/errors';
import type { MessageCode, MessageParams } from '@/lib/i18n/codes';
import { formatMoney } from '@/lib/format';
import { decimalToPico, formatPico, parseDecimal, PICO } from '@/lib/money';
import { generateSigningSecret } from '@/lib/alerts/signing';
import { parseWebhookUrl } from '@/lib/alerts/webhook-url';
import { alertSettings, MAX_LOW_BALANCE_USD, MAX_THRESHOLDS } from '@/lib/schemas/alerts';

// An account's alert settings: the thresholds, the webhook and its signing secret (encrypted at
// rest like the channel keys; shown once, when made).

export const DEFAULT_THRESHOLDS = [50, 80, 100];

export interface AlertSettingsView {
  webhook_url: string | null;
  thresholds: number[];
  low_balance_usd: string | null;
  /** False until the settings are first saved: no alert is evaluated for the account before. */
  enabled: boolean;
  secret_hint: string | null;
}

interface SettingsRow {
  webhookUrl: string | null;
  secret: string;
  thresholds: number[];
  lowBalanceUsd: { toFixed(dp: number): string } | null;
}

/** `whsec_…abcd`, so a user can tell which secret is current; null if it no longer decrypts (SECRETS_KEY changed). */
function secretHint(stored: string): string | null {
  try {
    const secret = decryptSecret(stored);
    return `${secret.slice(0, 6)}…${secret.slice(-4)}`;
  } catch {
    return null;
  }
}

function view(row: SettingsRow | null): AlertSettingsView {
  if (!row) return { webhook_url: null, thresholds: DEFAULT_THRESHOLDS, low_balance_usd: null, enabled: false, secret_hint: null };
  return {
    webhook_url: row.webhookUrl,
    thresholds: row.thresholds,
    low_balance_usd: row.lowBalanceUsd === null ? null : formatPico(decimalToPico(row.lowBalanceUsd)),
    enabled: true,
    secret_hint: secretHint(row.secret),
  };
}

export async function getAlertSettings(userId: string): Promise<AlertSettingsView> {
  const db = await getDb();
  return view(await db.alertSettings.findUnique({ where: { userId } }));
}

/** The plain signing secret of an account (for delivery). */
export function openSecret(stored: string): string {
  return decryptSecret(stored);
}

// The route's schema (lib/schemas/alerts.ts): PUT /api/alerts/settings has checked it already; other callers get the same 400.
const bodySchema = alertSettings;

function invalid(field: string, message: string, code: MessageCode = 'field.invalid', params?: MessageParams): GatewayError {
  const words = fieldError(field, code, params);
  return new GatewayError('invalid_request', `"${field}": ${message}`, { param: field, messageCode: code, params, fields: [words] });
}

const lowBalanceMax = () => formatMoney(MAX_LOW_BALANCE_USD * PICO);

function parseLowBalance(value: number | string | null): bigint | null {
  if (value === null) return null;
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  if (!/^\d+(\.\d{1,12})?$/.test(text))
    throw invalid('low_balance_usd', 'must be an amount in USD with at most 12 decimals, e.g. 5 or "2.50" (null for no alert).', 'field.low_balance', {
      max: lowBalanceMax(),
    });
  const pico = parseDecimal(text, 12);
  if (pico <= 0n || pico > MAX_LOW_BALANCE_USD * PICO)
    throw invalid('low_balance_usd', `must be more than 0 and at most ${lowBalanceMax()}.`, 'field.low_balance', { max: lowBalanceMax() });
  return pico;
}

/** Validates a settings body (400 naming the field): only the fields present are returned. */
export function parseAlertSettings(body: Record<string, unknown>): { webhookUrl?: string | null; thresholds?: number[]; lowBalancePico?: bigint | null } {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? 'body');
    const hint = field === 'thresholds' ? `must be a list of at most ${MAX_THRESHOLDS} whole percentages from 1 to 100.` : (issue?.message ?? 'invalid');
    const words: [MessageCode, MessageParams | undefined] =
      field === 'thresholds'
        ? ['field.thresholds', { max: MAX_THRESHOLDS }]
        : field === 'low_balance_usd'
          ? ['field.low_balance', { max: lowBalanceMax() }]
          : ['field.invalid', undefined];
    throw invalid(field, hint, ...words);
  }
  const v = parsed.data;
  const out: ReturnType<typeof parseAlertSettings> = {};
  if ('webhook_url' in body) out.webhookUrl = parseWebhookUrl(v.webhook_url ?? null);
  if (v.thresholds !== undefined) out.thresholds = [...new Set(v.thresholds ?? [])].sort((a, b) => a - b);
  if (v.low_balance_usd !== undefined) out.lowBalancePico = parseLowBalance(v.low_balance_usd);
  return out;
}

/**
 * Saves the settings (PUT /api/alerts/settings). The first save makes the signing secret and
 * answers it once (`secret`); later saves keep it.
 */
export async function saveAlertSettings(userId: string, body: Record<string, unknown>): Promise<AlertSettingsView & { secret?: string }> {
  const p = parseAlertSettings(body);
  const data = {
    ...(p.webhookUrl !== undefined ? { webhookUrl: p.webhookUrl } : {}),
    ...(p.thresholds !== undefined ? { thresholds: p.thresholds } : {}),
    ...(p.lowBalancePico !== undefined ? { lowBalanceUsd: p.lowBalancePico === null ? null : formatPico(p.lowBalancePico) } : {}),
  };
  const db = await getDb();
  const fresh = generateSigningSecret();
  const sealed = encryptSecret(fresh);
  const row = await db.alertSettings.upsert({
    where: { userId },
    create: { userId, secret: sealed, thresholds: DEFAULT_THRESHOLDS, ...data },
    update: { ...data, updatedAt: new Date() },
  });
  // Whether this save made the row (and so its secret) shows in the secret it holds.
  return row.secret === sealed ? { ...view(row), secret: fresh } : view(row);
}

/** A new signing secret (POST /api/alerts/settings/secret), answered once; the old one stops signing at once. */
export async function regenerateAlertSecret(userId: string): Promise<AlertSettingsView & { secret: string }> {
  const db = await getDb();
  const fresh = generateSigningSecret();
  const row = await db.alertSettings.upsert({
    where: { userId },
    create: { userId, secret: encryptSecret(fresh), thresholds: DEFAULT_THRESHOLDS },
    update: { secret: encryptSecret(fresh), updatedAt: new Date() },
  });
  return { ...view(row), secret: fresh };
}

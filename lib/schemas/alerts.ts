import { z } from 'zod';
import { formatMoney } from '@/lib/format';
import { coded, idParam, route } from './route';

// Budget and balance alerts: the settings (the alert form runs this schema too) and the events.

/** Most budget thresholds. */
export const MAX_THRESHOLDS = 10;
/** Highest low-balance alert, USD (lib/alerts/settings.ts checks the amount exactly). */
export const MAX_LOW_BALANCE_USD = 1_000_000n;

export const alertSettings = z.object({
  thresholds: coded(z.array(z.number().int().min(1).max(100)).max(MAX_THRESHOLDS).nullable(), 'field.thresholds', { max: MAX_THRESHOLDS })
    .optional()
    .meta({ description: "percentages of each key's budget that raise an alert" }),
  low_balance_usd: coded(
    z
      .union([z.number(), z.string().max(40)])
      .refine((v) => /^\d+(\.\d+)?$/.test(typeof v === 'number' ? String(v) : v.trim()))
      .nullable(),
    'field.low_balance',
    { max: formatMoney(MAX_LOW_BALANCE_USD * 1_000_000_000_000n) },
  )
    .optional()
    .meta({ description: 'USD; an alert when the balance falls below it; null: none' }),
  webhook_url: coded(z.string().max(2048).nullable(), 'field.webhook_url')
    .optional()
    .meta({ description: 'a public https:// address each alert is POSTed to, signed; null: none' }),
});

export const alerts = {
  list: route({
    method: 'GET',
    path: '/api/alerts',
    auth: 'session',
    summary: "The account's recent alert events, newest first",
    query: z.object({ undismissed: z.enum(['0', '1']).optional().meta({ description: "1: only the banner's (not dismissed)" }) }),
  }),
  dismiss: route({ method: 'POST', path: '/api/alerts/{id}/dismiss', auth: 'session', summary: 'Hide an alert from the dashboard banner', params: idParam }),
  settings: route({ method: 'GET', path: '/api/alerts/settings', auth: 'session', summary: "The account's alert settings" }),
  saveSettings: route({
    method: 'PUT',
    path: '/api/alerts/settings',
    auth: 'session',
    summary: 'Save the alert settings (the first save answers the signing secret, once)',
    body: alertSettings,
  }),
  newSecret: route({ method: 'POST', path: '/api/alerts/settings/secret', auth: 'session', summary: 'A new webhook signing secret, answered once' }),
};

import { z } from 'zod';
import { tierNames } from '@/lib/config/schema';
import { idParam, REGION_PATTERN, route, usdAmount } from '../route';

// The console's accounts: search, one account, its operator actions, its keys and statements.

/** Longest plan grant, days (lib/plans/subscriptions.ts uses it). */
export const MAX_PLAN_DAYS = 3660;

const positive = z.number().int().min(1).max(100_000_000);

export const accountAction = z.discriminatedUnion('action', [
  z.object({ action: z.literal('set_tier'), tier: z.enum(tierNames), pinned: z.boolean().default(true) }),
  z.object({ action: z.literal('set_status'), status: z.enum(['active', 'suspended']) }),
  z.object({ action: z.literal('adjust_balance'), amount_usd: usdAmount, note: z.string().max(500).default('') }),
  z.object({
    action: z.literal('set_limits'),
    limits: z
      .object({ rpm: positive.optional(), rph: positive.optional(), tokensPerDay: positive.nullable().optional(), concurrency: positive.optional() })
      .strict(),
  }),
  z.object({ action: z.literal('set_role'), role: z.enum(['user', 'admin']) }),
  z.object({ action: z.literal('set_region'), region: z.string().regex(REGION_PATTERN, 'a region name such as cn, eu or us').nullable() }),
  z.object({ action: z.literal('grant_plan'), plan: z.string().min(1).max(64), days: z.number().int().min(1).max(MAX_PLAN_DAYS) }),
  z.object({ action: z.literal('end_plan') }),
]);

export const adminAccounts = {
  search: route({
    method: 'GET',
    path: '/api/admin/accounts',
    auth: 'admin',
    summary: 'Search accounts by email (substring) or id',
    query: z.object({ q: z.string().max(320).optional() }),
  }),
  get: route({
    method: 'GET',
    path: '/api/admin/accounts/{id}',
    auth: 'admin',
    summary: 'An account with its keys, recent requests, ledger and plan',
    params: idParam,
  }),
  act: route({
    method: 'POST',
    path: '/api/admin/accounts/{id}',
    auth: 'admin',
    summary: 'One operator action: set_tier, set_status, adjust_balance, set_limits, set_role, set_region, grant_plan, end_plan',
    params: idParam,
    body: accountAction,
  }),
  revokeKey: route({
    method: 'DELETE',
    path: '/api/admin/accounts/{id}/keys/{keyId}',
    auth: 'admin',
    summary: "Revoke an account's key (every instance, at once)",
    params: idParam.extend({ keyId: z.string().max(64) }),
  }),
  statement: route({
    method: 'GET',
    path: '/api/admin/accounts/{id}/statements/{file}',
    auth: 'admin',
    summary: "Any account's monthly statement",
    params: idParam.extend({ file: z.string().max(32) }),
    response: ['application/json', 'text/csv', 'application/pdf'],
  }),
};

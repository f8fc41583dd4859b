import { z } from 'zod';
import { route, usdAmount } from '../route';
import { MAX_PLAN_DAYS } from './accounts';

// Redemption code batches.

/** Most codes in one batch (lib/admin/redemption.ts uses it). */
export const MAX_BATCH = 1000;

export const codeBatch = z
  .object({
    amount_usd: usdAmount.optional(),
    count: z.number().int().min(1).max(MAX_BATCH),
    expires_at: z.string().max(40).nullable().optional().meta({ description: 'ISO-8601 date or date-time' }),
    // A code may carry a plan for a number of days (lib/plans), besides or instead of an amount.
    plan: z.string().min(1).max(64).optional(),
    plan_days: z.number().int().min(1).max(MAX_PLAN_DAYS).optional(),
  })
  .strict();

export const adminCodes = {
  list: route({ method: 'GET', path: '/api/admin/codes', auth: 'admin', summary: 'Redemption code batches' }),
  create: route({
    method: 'POST',
    path: '/api/admin/codes',
    auth: 'admin',
    summary: 'Create a batch; the codes are in this answer only (stored hashed)',
    body: codeBatch,
    status: 201,
  }),
  batch: route({
    method: 'GET',
    path: '/api/admin/codes/{batchId}',
    auth: 'admin',
    summary: "A batch's codes (last four characters) and who redeemed each",
    params: z.object({ batchId: z.string().max(64) }),
  }),
};

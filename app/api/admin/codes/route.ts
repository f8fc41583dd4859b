// GET /api/admin/codes - redemption code batches
// POST /api/admin/codes - create a batch; the codes are in this answer only (stored hashed)
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody, usdAmount } from '@/lib/admin/input';
import { createCodeBatch, listBatches, MAX_BATCH } from '@/lib/admin/redemption';
import { toJson } from '@/lib/admin/serialize';
import { MAX_PLAN_DAYS } from '@/lib/plans/subscriptions';

const batch = z
  .object({
    amount_usd: usdAmount.optional(),
    count: z.number().int().min(1).max(MAX_BATCH),
    expires_at: z.string().max(40).nullable().optional(),
    // A code may carry a plan for a number of days (lib/plans), besides or instead of an amount.
    plan: z.string().min(1).max(64).optional(),
    plan_days: z.number().int().min(1).max(MAX_PLAN_DAYS).optional(),
  })
  .strict();

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ data: toJson(await listBatches()) });
});

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, batch);
  return json(
    await createCodeBatch(actor, {
      amountPico: body.amount_usd ?? 0n,
      count: body.count,
      expiresAt: body.expires_at,
      planId: body.plan,
      planDays: body.plan_days,
    }),
    201,
  );
});

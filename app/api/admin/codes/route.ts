// GET /api/admin/codes - redemption code batches
// POST /api/admin/codes - create a batch; the codes are in this answer only (stored hashed)
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody, usdAmount } from '@/lib/admin/input';
import { createCodeBatch, listBatches, MAX_BATCH } from '@/lib/admin/redemption';
import { toJson } from '@/lib/admin/serialize';

const batch = z.object({ amount_usd: usdAmount, count: z.number().int().min(1).max(MAX_BATCH), expires_at: z.string().max(40).nullable().optional() }).strict();

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ data: toJson(await listBatches()) });
});

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, batch);
  return json(await createCodeBatch(actor, { amountPico: body.amount_usd, count: body.count, expiresAt: body.expires_at }), 201);
});

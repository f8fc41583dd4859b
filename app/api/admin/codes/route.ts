// GET /api/admin/codes - redemption code batches
// POST /api/admin/codes - create a batch; the codes are in this answer only (stored hashed)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/http/validate';
import { adminCodes } from '@/lib/schemas/admin/codes';
import { createCodeBatch, listBatches } from '@/lib/admin/redemption';
import { toJson } from '@/lib/admin/serialize';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ data: toJson(await listBatches()) });
});

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, adminCodes.create);
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

// GET /api/admin/codes/:batchId - a batch's codes (last four characters) and who redeemed each
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { batchCodes } from '@/lib/admin/redemption';
import { toJson } from '@/lib/admin/serialize';

export const GET = apiRoute<{ batchId: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  return json({ data: toJson(await batchCodes(params.batchId)) });
});

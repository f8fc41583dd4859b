// GET /api/admin/accounts/:id/statements/:month(.csv|.pdf|.json) - any account's monthly statement, for operators
import { apiRoute } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { statementResponse } from '@/lib/statements/respond';

export const GET = apiRoute<{ id: string; file: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  return statementResponse(params.id, params.file);
});

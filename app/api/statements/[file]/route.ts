// GET /api/statements/:month(.csv|.pdf|.json) - the acting account's monthly statement (UTC month; docs/decisions/046)
import { apiRoute, requireUserId } from '@/lib/http/api';
import { statementResponse } from '@/lib/statements/respond';

export const GET = apiRoute<{ file: string }>(async (req, _ctx, params) => statementResponse(await requireUserId(req), params.file));

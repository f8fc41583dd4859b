// GET /api/ledger - the caller's balance history: recharges, credits and refunds, usage totalled per UTC day
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { parseLimit } from '@/lib/dashboard/filters';
import { decodeLedgerCursor, ledgerHistory } from '@/lib/dashboard/queries';
import { ledgerJson } from '@/lib/dashboard/serialize';
import { readQuery } from '@/lib/http/validate';
import { ledger } from '@/lib/schemas/ledger';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  readQuery(req, ledger.list); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  const before = params.get('before');
  const page = await ledgerHistory(userId, {
    limit: parseLimit(params.get('limit'), 50, 200),
    before: before ? decodeLedgerCursor(before) : undefined,
  });
  return json({ data: page.data.map(ledgerJson), has_more: page.nextCursor !== null, next_cursor: page.nextCursor });
});

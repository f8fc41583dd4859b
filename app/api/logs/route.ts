// GET /api/logs - the caller's requests, newest first, filtered (key, model, status, from, to) and cursor-paginated
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { decodeCursor, parseLimit, parseLogFilters } from '@/lib/dashboard/filters';
import { listLogs } from '@/lib/dashboard/queries';
import { logJson } from '@/lib/dashboard/serialize';
import { readQuery } from '@/lib/http/validate';
import { logs } from '@/lib/schemas/logs';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  readQuery(req, logs.list); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  const after = params.get('starting_after');
  const before = params.get('ending_before');
  const page = await listLogs(userId, parseLogFilters(params), {
    limit: parseLimit(params.get('limit'), 50, 200),
    startingAfter: after ? decodeCursor(after, 'starting_after') : undefined,
    endingBefore: before ? decodeCursor(before, 'ending_before') : undefined,
  });
  return json({
    data: page.data.map(logJson),
    has_more: page.nextCursor !== null,
    next_cursor: page.nextCursor,
    prev_cursor: page.prevCursor,
  });
});

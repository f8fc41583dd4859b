// GET /api/logs/export - the caller's filtered requests as CSV (same filters as /api/logs, newest first)
import { apiRoute, requireUserId } from '@/lib/http/api';
import { parseLogFilters } from '@/lib/dashboard/filters';
import { logCsvLines } from '@/lib/dashboard/queries';
import { csvStream } from '@/lib/dashboard/csv-stream';
import { errorFields, log } from '@/lib/log';

export const GET = apiRoute(async (req, ctx) => {
  const userId = await requireUserId(req);
  const filters = parseLogFilters(new URL(req.url).searchParams);
  // Header and first batch are read here: a failure now is a JSON error, later an aborted download.
  const body = await csvStream(logCsvLines(userId, filters), (err) =>
    log('error', 'csv export failed mid-stream; download aborted', { requestId: ctx.requestId, userId, ...errorFields(err) }),
  );
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="requests-${stamp}.csv"`,
      'cache-control': 'no-store',
    },
  });
});

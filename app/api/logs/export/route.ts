// GET /api/logs/export - the caller's filtered requests as CSV or JSONL (?format=jsonl), totals last (same filters as /api/logs, newest first)
import { apiRoute, requireUserId } from '@/lib/http/api';
import { parseLogFilters } from '@/lib/dashboard/filters';
import { logCsvLines } from '@/lib/dashboard/queries';
import { csvStream } from '@/lib/dashboard/csv-stream';
import { parseExportFormat } from '@/lib/dashboard/log-csv';
import { errorFields, log } from '@/lib/log';
import { readQuery } from '@/lib/http/validate';
import { logs } from '@/lib/schemas/logs';

export const GET = apiRoute(async (req, ctx) => {
  const userId = await requireUserId(req);
  readQuery(req, logs.export); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  const filters = parseLogFilters(params);
  const format = parseExportFormat(params.get('format'));
  // Header and first batch are read here: a failure now is a JSON error, later an aborted download.
  const body = await csvStream(logCsvLines(userId, filters, undefined, format), (err) =>
    log('error', 'csv export failed mid-stream; download aborted', { requestId: ctx.requestId, userId, ...errorFields(err) }),
  );
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return new Response(body, {
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="requests-${stamp}.${format}"`,
      'cache-control': 'no-store',
    },
  });
});

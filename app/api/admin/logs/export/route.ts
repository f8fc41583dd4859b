// GET /api/admin/logs/export - the filtered requests of every account as CSV or JSONL (?format=jsonl), with totals last (same filters as /api/admin/logs)
import { apiRoute } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { adminLogCsvLines, parseAdminLogFilters } from '@/lib/admin/logs';
import { csvStream } from '@/lib/dashboard/csv-stream';
import { parseExportFormat } from '@/lib/dashboard/log-csv';
import { errorFields, log } from '@/lib/log';
import { readQuery } from '@/lib/http/validate';
import { adminLogs } from '@/lib/schemas/admin/logs';

export const GET = apiRoute(async (req, ctx) => {
  const actor = await requireAdmin(req);
  readQuery(req, adminLogs.export); // the shape; the filters' meaning is read below
  const params = new URL(req.url).searchParams;
  const filters = await parseAdminLogFilters(params);
  const format = parseExportFormat(params.get('format'));
  // Header and first batch are read here: a failure now is a JSON error, later an aborted download.
  const body = await csvStream(adminLogCsvLines(filters, undefined, format), (err) =>
    log('error', 'admin csv export failed mid-stream; download aborted', { requestId: ctx.requestId, actor: actor.label, ...errorFields(err) }),
  );
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return new Response(body, {
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="all-requests-${stamp}.${format}"`,
      'cache-control': 'no-store',
    },
  });
});

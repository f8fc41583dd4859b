// GET /api/admin/logs/export - the filtered requests of every account as CSV (same filters as /api/admin/logs)
import { apiRoute } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { adminLogCsvLines, parseAdminLogFilters } from '@/lib/admin/logs';
import { csvStream } from '@/lib/dashboard/csv-stream';
import { errorFields, log } from '@/lib/log';

export const GET = apiRoute(async (req, ctx) => {
  const actor = await requireAdmin(req);
  const filters = await parseAdminLogFilters(new URL(req.url).searchParams);
  // Header and first batch are read here: a failure now is a JSON error, later an aborted download.
  const body = await csvStream(adminLogCsvLines(filters), (err) =>
    log('error', 'admin csv export failed mid-stream; download aborted', { requestId: ctx.requestId, actor: actor.label, ...errorFields(err) }),
  );
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="all-requests-${stamp}.csv"`,
      'cache-control': 'no-store',
    },
  });
});

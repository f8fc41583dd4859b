// GET /api/logs/export - the caller's filtered requests as CSV (same filters as /api/logs, newest first)
import { apiRoute, requireUserId } from '@/lib/http/api';
import { parseLogFilters } from '@/lib/dashboard/filters';
import { logCsvLines } from '@/lib/dashboard/queries';

export const GET = apiRoute(async (req) => {
  const userId = await requireUserId(req);
  const filters = parseLogFilters(new URL(req.url).searchParams);
  const lines = logCsvLines(userId, filters);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return new Response(body, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="requests-${stamp}.csv"`,
      'cache-control': 'no-store',
    },
  });
});

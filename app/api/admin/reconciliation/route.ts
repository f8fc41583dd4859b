// GET /api/admin/reconciliation?from&to[&channel][&format=csv] - tokens and cost recorded per channel,
// UTC day and model; POST /api/admin/reconciliation {csv, channel?} - a provider's usage export
// (OpenAI or Anthropic CSV) against what we recorded, per day and model (lib/admin/reconcile.ts).
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { codedError } from '@/lib/errors';
import { parseWith, readQuery } from '@/lib/http/validate';
import { adminReconciliation } from '@/lib/schemas/admin/reconciliation';
import { MAX_EXPORT_BYTES, reconcileExport, reconcileJson, reconcileRange, recordedCsv, recordedJson, recordedUsage } from '@/lib/admin/reconcile';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  const params = readQuery(req, adminReconciliation.recorded);
  const range = reconcileRange(params.from ?? null, params.to ?? null);
  const channel = params.channel?.trim() || undefined;
  const rows = await recordedUsage(range, channel);
  const format = params.format ?? 'json';
  if (format === 'csv') {
    return new Response(recordedCsv(rows), {
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="reconciliation-${range.from}-${range.to}.csv"`,
        'cache-control': 'no-store',
      },
    });
  }
  return json({ ...range, channel: channel ?? null, rows: rows.map(recordedJson) });
});

export const POST = apiRoute(async (req) => {
  await requireAdmin(req);
  const type = (req.headers.get('content-type') ?? '').toLowerCase();
  const params = new URL(req.url).searchParams;
  // The export as the body (text/csv, `?channel=`), or JSON {csv, channel} (the console's form).
  let csv: unknown;
  let channel: unknown = params.get('channel') ?? undefined;
  const text = await req.text();
  if (Buffer.byteLength(text) > MAX_EXPORT_BYTES + 64 * 1024)
    throw codedError('invalid_request', 'reconcile.too_large', { max: MAX_EXPORT_BYTES }, { param: 'csv' });
  if (type.includes('text/csv') || type.includes('text/plain')) csv = text;
  else if (type.includes('application/json')) {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw codedError('invalid_json', 'request.invalid_json');
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw codedError('invalid_request', 'request.not_object');
    const body = parseWith(adminReconciliation.compare.body, raw);
    csv = body.csv;
    channel = body.channel ?? channel;
  } else throw codedError('unsupported_media_type', 'request.not_json');
  if (typeof csv !== 'string' || csv.trim() === '') throw codedError('invalid_request', 'request.field_required', { field: 'csv' }, { param: 'csv' });
  if (channel !== undefined && channel !== null && typeof channel !== 'string')
    throw codedError('invalid_request', 'reconcile.channel', { channel: String(channel) }, { param: 'channel' });
  const name = typeof channel === 'string' && channel.trim() !== '' ? channel.trim() : undefined;
  return json(reconcileJson(await reconcileExport(csv, name)));
});

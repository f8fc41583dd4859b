// POST /api/admin/log-export/replay - re-send the request-log rows of [from, to) to the export sink,
// as batches marked "replay": {"from": ISO, "to": ISO} (a day, YYYY-MM-DD, or a timestamp; at most 31 days)
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/http/validate';
import { adminLogExport } from '@/lib/schemas/admin/log-export';
import { writeAudit } from '@/lib/audit';
import { parseBound } from '@/lib/dashboard/filters';
import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { MAX_REPLAY_DAYS, queueReplay } from '@/lib/log-export/exporter';

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const input = await readBody(req, adminLogExport.replay);
  if (!getConfig().logExport) throw new GatewayError('conflict', 'No log export is configured (log_export in the operator config).');
  const from = parseBound(input.from, 'from');
  const to = parseBound(input.to, 'to');
  if (to.getTime() <= from.getTime()) throw new GatewayError('invalid_request', 'to must be after from.', { param: 'to' });
  if (to.getTime() - from.getTime() > MAX_REPLAY_DAYS * 86_400_000)
    throw new GatewayError('invalid_request', `A replay covers at most ${MAX_REPLAY_DAYS} days.`, { param: 'to' });
  const replay = await queueReplay(from, to, actor.label);
  await writeAudit(actor, {
    action: 'log_export.replay',
    targetType: 'log_export',
    targetId: replay.id,
    after: { from: from.toISOString(), to: to.toISOString() },
  });
  return json({ id: replay.id, from: from.toISOString(), to: to.toISOString(), status: replay.status }, 202);
});

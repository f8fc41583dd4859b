// POST /api/admin/channels/:name/test - a tiny real request through the channel: result and latency
import { apiRoute, json } from '@/lib/http/api';
import { getConfig } from '@/lib/config';
import { GatewayError } from '@/lib/errors';
import { requireAdmin } from '@/lib/admin/guard';
import { writeAudit } from '@/lib/audit';
import { probeChannel } from '@/lib/gateway/probe';

export const POST = apiRoute<{ name: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const cfg = getConfig();
  const channel = cfg.channels.find((c) => c.name === params.name);
  if (!channel) throw new GatewayError('not_found', 'No such channel.');
  const result = await probeChannel(channel, cfg);
  await writeAudit(actor, { action: 'channel.test', targetType: 'channel', targetId: channel.name, after: result });
  return json({ channel: channel.name, ...result });
});

// POST /api/admin/channels/:name - runtime disable/enable, weight and limit (concurrency, tpm) overrides, on every instance
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/http/validate';
import { adminChannels } from '@/lib/schemas/admin/channels';
import { setChannelOverride } from '@/lib/channels/overrides';

export const POST = apiRoute<{ name: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, adminChannels.change);
  const override = await setChannelOverride(
    actor,
    params.name,
    { disabled: body.disabled, weight: body.weight, concurrency: body.concurrency as number | null | undefined, tpm: body.tpm as number | null | undefined },
    { note: body.note },
  );
  return json({
    channel: params.name,
    disabled: override?.disabled ?? false,
    weight: override?.weight ?? null,
    concurrency: override?.concurrency ?? null,
    tpm: override?.tpm ?? null,
  });
});

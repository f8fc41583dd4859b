// POST /api/admin/channels/:name - runtime disable/enable, weight and limit (concurrency, tpm) overrides, on every instance
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/admin/input';
import { setChannelOverride } from '@/lib/channels/overrides';

// concurrency and tpm: a whole number, or null for the operator config's; checked by setChannelOverride (a coded 400 naming the field).
const change = z
  .object({
    disabled: z.boolean().optional(),
    weight: z.number().int().min(0).max(1_000_000).nullable().optional(),
    concurrency: z.unknown().optional(),
    tpm: z.unknown().optional(),
    note: z.string().max(500).optional(),
  })
  .strict()
  .refine(
    (v) => v.disabled !== undefined || v.weight !== undefined || v.concurrency !== undefined || v.tpm !== undefined,
    'send "disabled", "weight", "concurrency" and/or "tpm"',
  );

export const POST = apiRoute<{ name: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, change);
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

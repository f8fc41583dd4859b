// POST /api/admin/channels/:name - runtime disable/enable and weight override, on every instance
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/admin/input';
import { setChannelOverride } from '@/lib/channels/overrides';

const change = z
  .object({ disabled: z.boolean().optional(), weight: z.number().int().min(0).max(1_000_000).nullable().optional(), note: z.string().max(500).optional() })
  .strict()
  .refine((v) => v.disabled !== undefined || v.weight !== undefined, 'send "disabled" and/or "weight"');

export const POST = apiRoute<{ name: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, change);
  const override = await setChannelOverride(actor, params.name, { disabled: body.disabled, weight: body.weight }, { note: body.note });
  return json({ channel: params.name, disabled: override?.disabled ?? false, weight: override?.weight ?? null });
});

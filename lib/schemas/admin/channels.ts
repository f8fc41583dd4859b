import { z } from 'zod';
import { route } from '../route';

// Upstream channels: their live state, runtime overrides and a test request.

const channelParam = z.object({ name: z.string().min(1).max(128) });

// concurrency and tpm: a whole number, or null for the operator config's; their range is checked by
// setChannelOverride (lib/channels/overrides.ts) against the config, naming the field.
export const channelChange = z
  .object({
    disabled: z.boolean().optional(),
    weight: z.number().int().min(0).max(1_000_000).nullable().optional(),
    // Any value here: setChannelOverride refuses a bad one in the console's words (admin.channel_limit, with the bounds).
    concurrency: z.unknown().optional().meta({ description: "requests in flight, a whole number from 1 to 100,000, or null for the operator config's" }),
    tpm: z.unknown().optional().meta({ description: "tokens per minute, a whole number from 1 to 1,000,000,000, or null for the operator config's" }),
    note: z.string().max(500).optional(),
  })
  .strict()
  .refine(
    (v) => v.disabled !== undefined || v.weight !== undefined || v.concurrency !== undefined || v.tpm !== undefined,
    'send "disabled", "weight", "concurrency" and/or "tpm"',
  );

export const adminChannels = {
  list: route({ method: 'GET', path: '/api/admin/channels', auth: 'admin', summary: 'Every configured channel with its live state (never its key)' }),
  change: route({
    method: 'POST',
    path: '/api/admin/channels/{name}',
    auth: 'admin',
    summary: 'Disable/enable, weight and limit overrides, on every instance',
    params: channelParam,
    body: channelChange,
  }),
  test: route({
    method: 'POST',
    path: '/api/admin/channels/{name}/test',
    auth: 'admin',
    summary: 'A tiny real request through the channel: result and latency',
    params: channelParam,
  }),
};

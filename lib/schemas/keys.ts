import { z } from 'zod';
import { coded, idParam, route } from './route';

// API keys: /api/keys and /api/keys/{id}. The body's shape is checked here (the key form runs the
// same schema before it sends); what needs the server (the model catalogue, address ranges, the
// expiry against the clock, the cache and region settings against the operator config) is checked
// by lib/keys/controls.ts after it, with the same field words.

/** Most entries of a key's model or address list. */
export const MAX_LIST = 100;

const decimal = (v: number | string) => /^\d+(\.\d+)?$/.test(typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : v.trim());
const budget = coded(
  z
    .union([z.number(), z.string().max(40)])
    .refine(decimal)
    .nullable(),
  'field.budget',
).meta({
  description: 'USD, more than 0, at most 12 decimals; null: no budget',
  examples: ['25', '12.50'],
});
const positiveInt = (max: number, code: 'field.rpm' | 'field.tpm' | 'field.concurrency') => coded(z.number().int().min(1).max(max).nullable(), code);

/** The controls a key may carry (create and edit): only the fields sent change; null clears one. */
export const keyControls = z.object({
  budget_usd: budget.optional(),
  monthly_budget_usd: budget.optional(),
  rpm: positiveInt(1_000_000, 'field.rpm').optional().meta({ description: 'requests per minute' }),
  tpm: positiveInt(1_000_000_000, 'field.tpm').optional().meta({ description: 'tokens per minute (input + output)' }),
  concurrency: positiveInt(100_000, 'field.concurrency').optional().meta({ description: 'requests in flight' }),
  allowed_ips: coded(z.array(z.string().max(256)).max(MAX_LIST).nullable(), 'field.ips', { max: MAX_LIST })
    .optional()
    .meta({ description: 'IPv4/IPv6 addresses or CIDR ranges the key is accepted from' }),
  expires_at: coded(z.string().max(64).nullable(), 'field.expires').optional().meta({ description: 'ISO-8601 date-time with a time zone' }),
  models: coded(z.array(z.string().max(256)).max(MAX_LIST).nullable(), 'field.models', { max: MAX_LIST })
    .optional()
    .meta({ description: 'the models the key may use (GET /v1/models lists them); null: every model of the tier' }),
  // Its range is the operator config's (lib/cache/key-setting.ts checks it, naming the maximum).
  response_cache_ttl_seconds: z
    .number()
    .nullable()
    .optional()
    .meta({ description: "seconds a reply is cached for this key, up to the operator's response_cache.max_ttl_seconds; null: only when a request asks" }),
  region: z.string().max(32).nullable().optional().meta({ description: 'pin the key to a region (cn, eu, us…); null clears' }),
  // A project of the same account (lib/projects/queries.ts checks it); projectId is accepted too.
  project_id: coded(z.string().max(64).nullable(), 'project.not_in_account')
    .optional()
    .meta({ description: 'a project of the account; null takes the key out' }),
  projectId: coded(z.string().max(64).nullable(), 'project.not_in_account').optional(),
});

const name = coded(z.string().trim().min(1).max(64), 'field.name');

// The name first: a form's errors are listed in its fields' order.
export const keyCreate = z.object({ name: name.optional().meta({ description: '1 to 64 characters ("default" when left out)' }), ...keyControls.shape });
export const keyUpdate = z.object({ name: name.optional(), ...keyControls.shape });

export const keys = {
  list: route({
    method: 'GET',
    path: '/api/keys',
    auth: 'session',
    summary: "The account's keys with their controls and spend (a developer of an organization: their own)",
  }),
  create: route({
    method: 'POST',
    path: '/api/keys',
    auth: 'session',
    summary: 'Create a key; the full key is in this answer only',
    body: keyCreate,
    status: 201,
  }),
  update: route({ method: 'PATCH', path: '/api/keys/{id}', auth: 'session', summary: "Edit a key's name and controls", params: idParam, body: keyUpdate }),
  revoke: route({ method: 'DELETE', path: '/api/keys/{id}', auth: 'session', summary: 'Revoke a key (every instance, at once)', params: idParam }),
};

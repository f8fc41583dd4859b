import { z } from 'zod';
import { coded, route } from '../route';

// Provider usage exports against what was recorded (docs/decisions/036).

export const reconcileQuery = z.object({
  from: z.string().max(40).optional().meta({ description: 'YYYY-MM-DD' }),
  to: z.string().max(40).optional().meta({ description: 'YYYY-MM-DD' }),
  channel: z.string().max(128).optional(),
  format: coded(z.enum(['json', 'csv']), 'reconcile.output_format').optional(),
});

export const reconcileBody = z.object({
  csv: coded(z.string().min(1), 'request.field_required', { field: 'csv' }).meta({ description: "the provider's usage export (OpenAI or Anthropic CSV)" }),
  channel: z.string().max(128).nullable().optional(),
});

export const adminReconciliation = {
  recorded: route({
    method: 'GET',
    path: '/api/admin/reconciliation',
    auth: 'admin',
    summary: 'Tokens and cost recorded per channel, UTC day and model (JSON or CSV)',
    query: reconcileQuery,
  }),
  compare: route({
    method: 'POST',
    path: '/api/admin/reconciliation',
    auth: 'admin',
    summary: "A provider's usage export against what was recorded, per day and model",
    description: 'The export as a text/csv body (channel in `?channel=`), or JSON {csv, channel}.',
    body: reconcileBody,
    bodyTypes: ['application/json', 'text/csv'],
  }),
};

import { z } from 'zod';
import { boundQuery, coded, cursorQuery, idParam, limitQuery, route } from '../route';

// Every account's requests, for operators.

export const adminLogFilters = z.object({
  account: coded(z.string().max(320), 'admin.log_account').optional().meta({ description: 'an account id or email' }),
  model: coded(z.string().max(200), 'filter.model_long').optional(),
  channel: coded(z.string().max(128), 'admin.log_channel').optional(),
  status: coded(z.string().max(32), 'filter.status').optional(),
  fallback: coded(z.string().max(8), 'admin.log_fallback').optional().meta({ description: '1 or 0' }),
  from: boundQuery('from'),
  to: boundQuery('to'),
});

export const adminLogs = {
  list: route({
    method: 'GET',
    path: '/api/admin/logs',
    auth: 'admin',
    summary: "Every account's requests, cursor pages",
    query: adminLogFilters.extend({ limit: limitQuery, starting_after: cursorQuery('starting_after') }),
  }),
  get: route({
    method: 'GET',
    path: '/api/admin/logs/{id}',
    auth: 'admin',
    summary: 'One request of any account, with its attempts and price breakdown',
    params: idParam,
  }),
  export: route({
    method: 'GET',
    path: '/api/admin/logs/export',
    auth: 'admin',
    summary: 'The filtered requests as CSV or JSONL, totals last',
    query: adminLogFilters.extend({ format: z.string().max(16).optional() }),
    response: ['text/csv', 'application/x-ndjson'],
  }),
};

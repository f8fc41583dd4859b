import { z } from 'zod';
import { boundQuery, coded, cursorQuery, idParam, limitQuery, route } from './route';

// The account's request log: /api/logs, one request, the export. The filters' meaning (a status
// class, a day in the viewer's zone) is read by lib/dashboard/filters.ts, with the same words.

export const logFilters = z.object({
  key: coded(z.string().max(64), 'filter.key').optional().meta({ description: 'an API key id' }),
  model: coded(z.string().max(200), 'filter.model_long').optional(),
  status: coded(z.string().max(32), 'filter.status').optional().meta({ description: 'ok, error, client_closed, an HTTP status (429) or a class (5xx)' }),
  from: boundQuery('from'),
  to: boundQuery('to'),
  tz: coded(z.string().max(64), 'filter.tz').optional().meta({ description: 'the IANA time zone bare days are read in (UTC by default)' }),
});

export const logList = logFilters.extend({ limit: limitQuery, starting_after: cursorQuery('starting_after'), ending_before: cursorQuery('ending_before') });
export const logExport = logFilters.extend({ format: z.string().max(16).optional().meta({ description: 'csv (default) or jsonl' }) });

export const logs = {
  list: route({
    method: 'GET',
    path: '/api/logs',
    auth: 'session',
    summary: "The account's requests, newest first, filtered and cursor-paginated",
    query: logList,
  }),
  get: route({
    method: 'GET',
    path: '/api/logs/{id}',
    auth: 'session',
    summary: 'One request with its attempts, route reason and price breakdown',
    params: idParam,
  }),
  export: route({
    method: 'GET',
    path: '/api/logs/export',
    auth: 'session',
    summary: 'The filtered requests as CSV or JSONL, totals last',
    query: logExport,
    response: ['text/csv', 'application/x-ndjson'],
  }),
};

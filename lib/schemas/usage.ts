import { z } from 'zod';
import { coded, route } from './route';

// Usage: the overview (balance, limits, 30 days) or a report over UTC days, and its CSV.

export const usageQuery = z.object({
  from: coded(z.string().max(40), 'usage.day', { name: 'from' }).optional().meta({ description: 'first day, YYYY-MM-DD' }),
  to: coded(z.string().max(40), 'usage.day', { name: 'to' }).optional().meta({ description: 'last day, YYYY-MM-DD' }),
  group_by: coded(z.string().max(16), 'usage.group_by').optional().meta({ description: 'day, model or key' }),
  tz: coded(z.string().max(64), 'filter.tz').optional(),
});

export const usage = {
  get: route({
    method: 'GET',
    path: '/api/usage',
    auth: 'session',
    summary: 'Balance, limits and 30 days of totals; with from, to or group_by: the usage report of that range',
    query: usageQuery,
  }),
  export: route({ method: 'GET', path: '/api/usage/export', auth: 'session', summary: 'The usage report as CSV', query: usageQuery, response: ['text/csv'] }),
};

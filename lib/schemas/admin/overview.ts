import { route } from '../route';

// The console's first page.

export const adminOverview = {
  get: route({
    method: 'GET',
    path: '/api/admin/overview',
    auth: 'admin',
    summary: 'Requests, failures, revenue and spend (today, 7 and 30 days), breakdowns, channel health',
  }),
};

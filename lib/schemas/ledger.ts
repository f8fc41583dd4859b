import { z } from 'zod';
import { cursorQuery, limitQuery, route } from './route';

// The balance history.

export const ledger = {
  list: route({
    method: 'GET',
    path: '/api/ledger',
    auth: 'session',
    summary: 'Recharges, credits, refunds and usage totalled per UTC day, newest first',
    query: z.object({ limit: limitQuery, before: cursorQuery('before') }),
  }),
};

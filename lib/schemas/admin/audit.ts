import { z } from 'zod';
import { route } from '../route';

// The operators' audit log.

export const adminAudit = {
  list: route({
    method: 'GET',
    path: '/api/admin/audit',
    auth: 'admin',
    summary: 'The audit log, newest first (200 entries)',
    query: z.object({ target_type: z.string().max(64).optional(), target_id: z.string().max(128).optional() }),
  }),
};

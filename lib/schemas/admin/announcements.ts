import { z } from 'zod';
import { route } from '../route';

// The notice on every dashboard.

export const announcementPost = z.object({ message: z.string().min(1).max(1000), level: z.enum(['info', 'warning']).default('info') }).strict();

export const adminAnnouncements = {
  get: route({ method: 'GET', path: '/api/admin/announcements', auth: 'admin', summary: 'The notice on every dashboard (or null)' }),
  post: route({
    method: 'POST',
    path: '/api/admin/announcements',
    auth: 'admin',
    summary: 'Post one, replacing the current one',
    body: announcementPost,
    status: 201,
  }),
  delete: route({ method: 'DELETE', path: '/api/admin/announcements', auth: 'admin', summary: 'Take it down' }),
};

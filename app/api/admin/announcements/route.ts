// GET /api/admin/announcements - the notice on every dashboard (or null)
// POST /api/admin/announcements - post one {message, level: info|warning}, replacing the current one
// DELETE /api/admin/announcements - take it down
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/admin/input';
import { activeAnnouncement, clearAnnouncement, postAnnouncement } from '@/lib/admin/announcements';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ announcement: await activeAnnouncement() });
});

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, z.object({ message: z.string().min(1).max(1000), level: z.enum(['info', 'warning']).default('info') }).strict());
  return json({ announcement: await postAnnouncement(actor, body.message, body.level) }, 201);
});

export const DELETE = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  await clearAnnouncement(actor);
  return json({ announcement: null });
});

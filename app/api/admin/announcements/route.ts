// GET /api/admin/announcements - the notice on every dashboard (or null)
// POST /api/admin/announcements - post one {message, level: info|warning}, replacing the current one
// DELETE /api/admin/announcements - take it down
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { readBody } from '@/lib/http/validate';
import { adminAnnouncements } from '@/lib/schemas/admin/announcements';
import { activeAnnouncement, clearAnnouncement, postAnnouncement } from '@/lib/admin/announcements';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  return json({ announcement: await activeAnnouncement() });
});

export const POST = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, adminAnnouncements.post);
  return json({ announcement: await postAnnouncement(actor, body.message, body.level) }, 201);
});

export const DELETE = apiRoute(async (req) => {
  const actor = await requireAdmin(req);
  await clearAnnouncement(actor);
  return json({ announcement: null });
});

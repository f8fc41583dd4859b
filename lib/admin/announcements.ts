import { getDb } from '@/lib/db';
import { GatewayError } from '@/lib/errors';
import { writeAudit, type Actor } from '@/lib/audit';

// The notice shown on every user's dashboard (maintenance windows, price changes). One at a time:
// posting a new one retires the previous; rows are kept as history.

export type AnnouncementLevel = 'info' | 'warning';

export interface Announcement {
  id: string;
  message: string;
  level: AnnouncementLevel;
  createdAt: Date;
  createdBy: string;
}

const toAnnouncement = (r: { id: string; message: string; level: string; createdAt: Date; createdBy: string }): Announcement => ({
  ...r,
  level: r.level === 'warning' ? 'warning' : 'info',
});

export async function activeAnnouncement(): Promise<Announcement | null> {
  const db = await getDb();
  const row = await db.announcement.findFirst({ where: { active: true }, orderBy: { createdAt: 'desc' } });
  return row ? toAnnouncement(row) : null;
}

export async function postAnnouncement(actor: Actor, message: string, level: AnnouncementLevel): Promise<Announcement> {
  const text = message.trim();
  if (!text || text.length > 1000) throw new GatewayError('invalid_request', 'The message must be 1 to 1000 characters.', { param: 'message' });
  const db = await getDb();
  return db.$transaction(async (tx) => {
    const before = await tx.announcement.findFirst({ where: { active: true }, orderBy: { createdAt: 'desc' } });
    await tx.announcement.updateMany({ where: { active: true }, data: { active: false } });
    const row = await tx.announcement.create({ data: { message: text, level, createdBy: actor.label } });
    await writeAudit(
      actor,
      {
        action: 'announcement.post',
        targetType: 'announcement',
        targetId: row.id,
        before: before ? { message: before.message, level: before.level } : null,
        after: { message: text, level },
      },
      tx,
    );
    return toAnnouncement(row);
  });
}

export async function clearAnnouncement(actor: Actor): Promise<void> {
  const db = await getDb();
  await db.$transaction(async (tx) => {
    const before = await tx.announcement.findFirst({ where: { active: true }, orderBy: { createdAt: 'desc' } });
    if (!before) return;
    await tx.announcement.updateMany({ where: { active: true }, data: { active: false } });
    await writeAudit(
      actor,
      { action: 'announcement.clear', targetType: 'announcement', targetId: before.id, before: { message: before.message, level: before.level }, after: null },
      tx,
    );
  });
}

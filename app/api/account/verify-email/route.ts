// POST /api/account/verify-email - send the signed-in person's verification link again (3 a minute).
// {verified: true} when there is nothing to verify; 503 when the mail could not be sent.
import { apiRoute, enforceLimit, json, requireActor } from '@/lib/http/api';
import { getDb } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { publicOriginOf } from '@/lib/orgs/origin';
import { currentLocale } from '@/lib/i18n/server';
import { sendVerification } from '@/lib/auth/email-verification';
import { mailConfigured } from '@/lib/mail/transport';

export const POST = apiRoute(async (req) => {
  const { personId } = await requireActor(req);
  await enforceLimit(`gw:user:verify-email:${personId}`, 3, 'verification mail: 3 per account per minute');
  const db = await getDb();
  const user = await db.user.findUniqueOrThrow({ where: { id: personId }, select: { id: true, email: true, emailVerifiedAt: true } });
  if (user.emailVerifiedAt) return json({ verified: true, sent: false });
  if (!mailConfigured()) throw codedError('unavailable', 'mail.not_configured');
  if (!(await sendVerification(user, publicOriginOf(req), await currentLocale()))) throw codedError('unavailable', 'mail.not_sent');
  return json({ verified: false, sent: true });
});

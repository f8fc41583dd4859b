// Email verification (issue 41 item 3; docs/decisions/050). With auth.require_email_verification on,
// a person whose mailbox is not proven cannot redeem codes, recharge or buy a plan (403
// `email.unverified`); everything else works. The link is signed, not stored: `<userId>.<exp36>.<mac>`,
// HMAC-SHA256 over the id, the address and the expiry with the auth secret, so it proves that address.
// Opening it twice is harmless (it only sets emailVerifiedAt once).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { getDb, isUuid } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';
import { authSecret } from '@/lib/secrets';
import { sendVerificationMail } from '@/lib/mail/messages';
import type { Locale } from '@/lib/i18n/messages';

export const VERIFY_TTL_MS = 3 * 86_400_000;

function mac(userId: string, email: string, exp: number): string {
  return createHmac('sha256', authSecret()).update(`verify-email:${userId}:${email}:${exp}`).digest('base64url');
}

export function verificationToken(userId: string, email: string, now = Date.now()): string {
  const exp = now + VERIFY_TTL_MS;
  return `${userId}.${exp.toString(36)}.${mac(userId, email, exp)}`;
}

export function verificationLink(origin: string, token: string): string {
  return `${origin}/api/auth/verify-email?token=${encodeURIComponent(token)}`;
}

/** Mails the person a verification link; false when not sent (no SMTP, or it refused). */
export async function sendVerification(user: { id: string; email: string }, origin: string, locale: Locale): Promise<boolean> {
  return sendVerificationMail(user.email, verificationLink(origin, verificationToken(user.id, user.email)), locale);
}

/** Opens a verification link: `verified` (now or before), `expired`, or `invalid`. */
export async function verifyEmailToken(token: unknown): Promise<'verified' | 'expired' | 'invalid'> {
  if (typeof token !== 'string' || token.length > 300) return 'invalid';
  const [userId, exp36, given] = token.split('.');
  const exp = parseInt(exp36 ?? '', 36);
  if (!userId || !isUuid(userId) || !Number.isSafeInteger(exp) || !given) return 'invalid';
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { email: true, emailVerifiedAt: true, deletedAt: true } });
  if (!user || user.deletedAt) return 'invalid';
  const want = Buffer.from(mac(userId, user.email, exp));
  const got = Buffer.from(given);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
  if (user.emailVerifiedAt) return 'verified';
  if (exp <= Date.now()) return 'expired';
  await db.user.updateMany({ where: { id: userId, emailVerifiedAt: null }, data: { emailVerifiedAt: new Date() } });
  return 'verified';
}

/** Whether this person must still verify before paying (verification on, mailbox not proven). */
export async function verificationPending(personId: string): Promise<boolean> {
  if (!getConfig().requireEmailVerification) return false;
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: personId }, select: { emailVerifiedAt: true } });
  return !!user && user.emailVerifiedAt === null;
}

/** The gate of redeem, recharge and plan checkout: 403 `email.unverified` while verification is pending. */
export async function requireVerifiedEmail(personId: string): Promise<void> {
  if (await verificationPending(personId)) throw codedError('forbidden', 'email.unverified');
}

// Password reset by mailed link (issue 41 item 3; docs/decisions/050). A link carries 256 random bits;
// only their SHA-256 is stored, so a database read does not hand out working links. A link works once
// and for RESET_TTL_MS; using it sets the password (the sign-up rules), ends every session
// (sessionsValidFrom) and spends every other open link of the account. Asking for a link answers the
// same whether an account exists or not, and the lookup, insert and send happen after the answer, so
// neither the words nor the timing tell which.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { getDb } from '@/lib/db';
import { codedError, ruleError } from '@/lib/errors';
import { hashPassword } from '@/lib/auth/password';
import { emailProblem, normaliseEmail, passwordProblem } from '@/lib/auth/password-rules';
import { throttleStore } from '@/lib/auth/login-throttle';
import { enforceLimit } from '@/lib/limits/enforce';
import { log, errorFields } from '@/lib/log';
import { mailConfigured } from '@/lib/mail/transport';
import { sendPasswordResetMail } from '@/lib/mail/messages';
import type { Locale } from '@/lib/i18n/messages';

export const RESET_TTL_MS = 60 * 60_000;
/** Links mailed to one address per hour (whether or not it has an account): no mail-bombing through us. */
export const RESET_MAILS_PER_EMAIL_PER_HOUR = 5;
export const RESET_REQUESTS_PER_IP_PER_MINUTE = 10;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export function resetLink(origin: string, token: string): string {
  return `${origin}/reset-password?token=${encodeURIComponent(token)}`;
}

/**
 * Asks for a reset link for `email`. Answers nothing: every well-formed request gets the same reply.
 * 503 when no mail can be sent (the page says to contact the operator), 429 past the budgets.
 */
export async function requestPasswordReset(email: string, ip: string, origin: string, locale: Locale): Promise<void> {
  if (!mailConfigured()) throw codedError('unavailable', 'mail.not_configured');
  const problem = emailProblem(email);
  if (problem) throw ruleError(problem, 'email');
  await enforceLimit(`gw:ip:password-reset:${ip}`, RESET_REQUESTS_PER_IP_PER_MINUTE, `password reset: ${RESET_REQUESTS_PER_IP_PER_MINUTE} per IP per minute`);
  const normalised = normaliseEmail(email);
  const key = `gw:password-reset:email:${createHash('sha256').update(normalised).digest('hex').slice(0, 32)}`;
  const byEmail = await throttleStore().begin(key, `${Date.now()}:${randomUUID()}`, Date.now(), RESET_MAILS_PER_EMAIL_PER_HOUR, 60 * 60_000);
  if (!byEmail.ok) {
    throw codedError(
      'rate_limit_exceeded',
      'auth.reset_throttled',
      { seconds: Math.ceil(byEmail.retryAfterMs / 1000) },
      { retryAfterMs: byEmail.retryAfterMs },
    );
  }
  // After the answer: an existing account costs a lookup, an insert and an SMTP round trip, an unknown one a lookup.
  setImmediate(() => {
    mailResetLink(normalised, origin, locale).catch((err) => log('error', 'password reset mail failed', errorFields(err)));
  });
}

async function mailResetLink(email: string, origin: string, locale: Locale): Promise<void> {
  const db = await getDb();
  const user = await db.user.findUnique({ where: { email }, select: { id: true, deletedAt: true, organization: { select: { id: true } } } });
  if (!user || user.deletedAt || user.organization) return;
  const token = randomBytes(32).toString('base64url');
  await db.passwordReset.create({ data: { userId: user.id, tokenHash: tokenHash(token), expiresAt: new Date(Date.now() + RESET_TTL_MS) } });
  await sendPasswordResetMail(email, resetLink(origin, token), locale);
}

type ResetState = { ok: true; email: string } | { ok: false; reason: 'invalid' | 'expired' };

/** What a reset link is worth (the reset page asks before showing its form). */
export async function checkResetToken(token: unknown): Promise<ResetState> {
  if (typeof token !== 'string' || token.length < 20 || token.length > 200) return { ok: false, reason: 'invalid' };
  const db = await getDb();
  const row = await db.passwordReset.findUnique({ where: { tokenHash: tokenHash(token) } });
  if (!row || row.usedAt) return { ok: false, reason: 'invalid' };
  if (row.expiresAt.getTime() <= Date.now()) return { ok: false, reason: 'expired' };
  const user = await db.user.findUnique({ where: { id: row.userId }, select: { email: true, deletedAt: true } });
  if (!user || user.deletedAt) return { ok: false, reason: 'invalid' };
  return { ok: true, email: user.email };
}

/** Sets a new password with a reset link: single use; every session and every other link of the account ends. */
export async function resetPassword(token: unknown, password: unknown): Promise<void> {
  if (typeof password !== 'string' || password.length === 0) throw codedError('invalid_request', 'auth.new_password_missing', undefined, { param: 'password' });
  const problem = passwordProblem(password);
  if (problem) throw ruleError(problem, 'password');
  const state = await checkResetToken(token);
  if (!state.ok) throw codedError('invalid_request', state.reason === 'expired' ? 'auth.reset_expired' : 'auth.reset_invalid', undefined, { param: 'token' });
  const passwordHash = await hashPassword(password);
  const db = await getDb();
  const now = new Date();
  await db.$transaction(async (tx) => {
    // The claim: of two uses at once, one wins.
    const claimed = await tx.passwordReset.updateMany({
      where: { tokenHash: tokenHash(token as string), usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (claimed.count !== 1) throw codedError('invalid_request', 'auth.reset_invalid', undefined, { param: 'token' });
    const row = await tx.passwordReset.findUniqueOrThrow({ where: { tokenHash: tokenHash(token as string) } });
    const user = await tx.user.findUniqueOrThrow({ where: { id: row.userId }, select: { emailVerifiedAt: true } });
    await tx.user.update({
      where: { id: row.userId },
      // The link came by mail: the mailbox is proven as well.
      data: { passwordHash, sessionsValidFrom: now, emailVerifiedAt: user.emailVerifiedAt ?? now },
    });
    await tx.passwordReset.updateMany({ where: { userId: row.userId, usedAt: null }, data: { usedAt: now } });
  });
}

import { findUserByEmail } from '@/lib/accounts/queries';
import { verifyPassword } from '@/lib/auth/password';
import { beginLoginAttempt } from '@/lib/auth/login-throttle';
import { codedError, ruleError } from '@/lib/errors';
import { emailProblem } from '@/lib/auth/password-rules';
import { ssoRequiredDomain } from '@/lib/auth/sso';

/**
 * Checks an email and password. Unknown emails still pay for a hash comparison, and every
 * failure looks the same, so neither the answer nor its timing tells whether an account exists.
 */
export async function verifyCredentials(email: string, password: string) {
  const user = await findUserByEmail(email);
  const ok = await verifyPassword(password, user?.passwordHash);
  return ok && user ? user : null;
}

/**
 * One sign-in, for POST /api/auth/login and the browser's next-auth sign-in alike: the failure
 * SSO-required domains (403), the throttle per account and client address and per address (429), then the password (401, the same answer for an unknown email), and only
 * to the right password whether the account is suspended (403).
 */
export async function signInWithPassword(email: string, password: string, ip: string) {
  // An address no account can have is refused as such (no throttle spent, nothing looked up).
  const problem = emailProblem(email);
  if (problem) throw ruleError(problem, 'email');
  // An organization requires SSO for this address's domain (docs/decisions/052): no password works,
  // said before the password is looked at, so the answer tells nothing about the account.
  const ssoDomain = await ssoRequiredDomain(email);
  if (ssoDomain) throw codedError('forbidden', 'auth.sso_required', { domain: ssoDomain });
  const attempt = await beginLoginAttempt(email, ip);
  const user = await verifyCredentials(email, password);
  if (!user) throw codedError('unauthenticated', 'auth.invalid_credentials');
  await attempt.succeeded();
  if (user.status === 'suspended') throw codedError('account_suspended', 'auth.account_suspended');
  return user;
}

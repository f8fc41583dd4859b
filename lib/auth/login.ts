import { findUserByEmail } from '@/lib/accounts/queries';
import { verifyPassword } from '@/lib/auth/password';

/**
 * Checks an email and password. Unknown emails still pay for a hash comparison, and every
 * failure looks the same, so neither the answer nor its timing tells whether an account exists.
 */
export async function verifyCredentials(email: string, password: string) {
  const user = await findUserByEmail(email);
  const ok = await verifyPassword(password, user?.passwordHash);
  return ok && user ? user : null;
}

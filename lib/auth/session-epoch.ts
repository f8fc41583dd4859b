// Sessions are JWTs that no server-side store can end, so each carries the instant it was signed in
// (`authTime`, ms; kept when next-auth re-issues the token) and an account can refuse every session
// signed in before its sessionsValidFrom: sign out everywhere, a password change, deletion.

export const AUTH_TIME_CLAIM = 'authTime';

/** Whether a session signed in at `authTime` is still good for an account whose sessions are valid from `validFrom`. */
export function sessionIsCurrent(authTime: unknown, validFrom: Date | null | undefined): boolean {
  if (!validFrom) return true;
  return typeof authTime === 'number' && Number.isFinite(authTime) && authTime >= validFrom.getTime();
}

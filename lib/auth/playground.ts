// The dashboard playground's credential (docs/decisions/024-playground-session-credential.md): a
// short-lived token minted by POST /api/playground/token for the signed-in session, never a pasted
// key and never shown. The gateway takes it in place of an API key (lib/auth/principal.ts) only
// together with the session cookie it was minted for and from a same-origin page, so the request is
// admitted, limited, billed and logged by the same pipeline as a key's, as the account's, with
// PLAYGROUND_KEY_ID in the log's key column.
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { env } from '@/lib/env';
import { codedError } from '@/lib/errors';
import { authSecret } from '@/lib/secrets';
import { AUTH_TIME_CLAIM } from '@/lib/auth/session-epoch';
import { originOf, requestOrigin } from '@/lib/auth/request-origin';

export const PLAYGROUND_PREFIX = 'gwpg.';
/** How long a minted credential works; the page mints another before it runs out. */
export const PLAYGROUND_TTL_MS = 5 * 60_000;
/**
 * The key id playground requests are logged under (no key row has it: key ids are random v4 UUIDs,
 * and this one is not). Its last 12 hex digits spell "playgr".
 */
export const PLAYGROUND_KEY_ID = '00000000-0000-0000-0000-706c61796772';

interface Claims {
  /** Account id. */
  u: string;
  /** The session's sign-in instant (authTime claim): binds the credential to that session. */
  t: number;
  /** Expiry, epoch ms. */
  e: number;
}

const signingKey = () => hash('sha256', `${authSecret()}\0playground-credential`, 'buffer');
const sign = (payload: string) => createHmac('sha256', signingKey()).update(payload).digest('base64url');

/** A credential for `userId`'s session signed in at `authTime`, good until `now + PLAYGROUND_TTL_MS`. */
export function mintPlaygroundToken(userId: string, authTime: number, now = Date.now()): { token: string; expiresAt: number } {
  const claims: Claims = { u: userId, t: authTime, e: now + PLAYGROUND_TTL_MS };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return { token: `${PLAYGROUND_PREFIX}${payload}.${sign(payload)}`, expiresAt: claims.e };
}

/** The claims of a credential this gateway signed, or null for anything else (forged, altered, malformed). */
export function readPlaygroundToken(token: string): Claims | null {
  const [payload, mac, ...rest] = token.slice(PLAYGROUND_PREFIX.length).split('.');
  if (!payload || !mac || rest.length > 0 || payload.length > 512) return null;
  const expected = Buffer.from(sign(payload));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
    return typeof claims.u === 'string' && typeof claims.t === 'number' && typeof claims.e === 'number' ? claims : null;
  } catch {
    return null;
  }
}

/** One cookie's value from a Cookie header. */
function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const headersOf = (h: Record<string, string | undefined>) => ({ get: (name: string) => h[name.toLowerCase()] ?? null });

/**
 * The checks a credential must pass besides its signature, on every request: not expired; sent
 * from a page of this site (Origin one of the app's origins, and Sec-Fetch-Site, when the browser
 * sends it, same-origin: a CSRF guard, since the session cookie rides along with any request the
 * browser makes); with the session cookie of the same account and sign-in (so a credential copied
 * out of the page works nowhere else, and not after that session signed out).
 */
export async function checkPlaygroundRequest(claims: Claims, headers: Record<string, string | undefined>, now = Date.now()): Promise<void> {
  if (claims.e <= now) throw codedError('invalid_api_key', 'playground.expired');
  const site = headers['sec-fetch-site'];
  const origin = headers.origin ? originOf(headers.origin) : null;
  const allowed = new Set<string>();
  for (const configured of [env.PUBLIC_BASE_URL, env.NEXTAUTH_URL]) {
    const o = configured ? originOf(configured) : null;
    if (o) allowed.add(o);
  }
  const own = requestOrigin(headersOf(headers));
  if (own) allowed.add(own);
  if ((site !== undefined && site !== 'same-origin') || !origin || !allowed.has(origin)) {
    throw codedError('forbidden', 'playground.wrong_page');
  }
  // The names sessionCookieSettings (lib/auth/session-cookie.ts) picks from, either of which only
  // this server's secret can have made; not imported from there, nor next-auth statically, so the
  // lean gateway loads next-auth only when a playground request comes.
  const cookie = cookieValue(headers.cookie, '__Secure-next-auth.session-token') ?? cookieValue(headers.cookie, 'next-auth.session-token');
  const { decode } = await import('next-auth/jwt');
  const session = cookie ? await decode({ token: cookie, secret: authSecret() }).catch(() => null) : null;
  if (!session || session.sub !== claims.u || session[AUTH_TIME_CLAIM] !== claims.t) {
    throw codedError('invalid_api_key', 'playground.wrong_session');
  }
}

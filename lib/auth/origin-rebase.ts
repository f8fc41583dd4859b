import { env } from '@/lib/env';
import { requestOrigin } from '@/lib/auth/request-origin';

/**
 * next-auth 4 builds every URL it answers with (sign-out and sign-in redirects, the callback-url
 * cookie) from NEXTAUTH_URL, and without it from http://localhost:3000, whatever host the browser
 * is on: sign-out then sent people to a page that refused to connect. Unless NEXTAUTH_URL is set,
 * those URLs are moved onto the origin the request came in on (X-Forwarded-* only with TRUST_PROXY).
 */
export const NEXT_AUTH_DEFAULT_ORIGIN = 'http://localhost:3000';

function rebaseUrl(value: string, origin: string): string {
  if (value === NEXT_AUTH_DEFAULT_ORIGIN) return origin;
  return value.startsWith(`${NEXT_AUTH_DEFAULT_ORIGIN}/`) ? origin + value.slice(NEXT_AUTH_DEFAULT_ORIGIN.length) : value;
}

function rebaseCookie(cookie: string, origin: string): string {
  const encodedDefault = encodeURIComponent(NEXT_AUTH_DEFAULT_ORIGIN);
  const eq = cookie.indexOf('=');
  const semi = cookie.indexOf(';');
  if (eq < 0) return cookie;
  const value = cookie.slice(eq + 1, semi < 0 ? undefined : semi);
  if (value !== encodedDefault && !value.startsWith(`${encodedDefault}%2F`)) return cookie;
  const rebased = encodeURIComponent(origin) + value.slice(encodedDefault.length);
  return cookie.slice(0, eq + 1) + rebased + (semi < 0 ? '' : cookie.slice(semi));
}

/** The next-auth response with its URLs on the request's own origin (unchanged when NEXTAUTH_URL is set). */
export async function rebaseAuthResponse(req: Request, res: Response): Promise<Response> {
  if (env.NEXTAUTH_URL) return res;
  const origin = requestOrigin(req.headers);
  if (!origin || origin === NEXT_AUTH_DEFAULT_ORIGIN) return res;
  const headers = new Headers();
  res.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    headers.set(name, name === 'location' ? rebaseUrl(value, origin) : value);
  });
  for (const cookie of res.headers.getSetCookie()) headers.append('set-cookie', rebaseCookie(cookie, origin));
  let body: BodyInit | null = res.body;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) {
    const text = await res.text();
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object' && typeof (parsed as { url?: unknown }).url === 'string') {
        const withUrl = parsed as { url: string };
        body = JSON.stringify({ ...withUrl, url: rebaseUrl(withUrl.url, origin) });
        headers.delete('content-length');
      } else body = text;
    } catch {
      body = text;
    }
  }
  return new Response(body, { status: res.status, statusText: res.statusText, headers });
}

/**
 * Where next-auth lives for this request: under NEXTAUTH_URL when set (a bare origin means
 * /api/auth under it, as next-auth reads it), else on the request's own origin, so an SSO provider
 * sends the browser back to the host it left from (lib/auth/sso-providers.ts).
 */
export function authBaseUrl(req: { headers: Pick<Headers, 'get'> }, nextAuthUrl: string | undefined = env.NEXTAUTH_URL): string {
  if (nextAuthUrl) {
    const url = new URL(nextAuthUrl);
    const path = url.pathname === '/' ? '/api/auth' : url.pathname.replace(/\/+$/, '');
    return `${url.origin}${path}`;
  }
  return `${requestOrigin(req.headers) ?? NEXT_AUTH_DEFAULT_ORIGIN}/api/auth`;
}

import { randomUUID } from 'node:crypto';
import { getServerSession } from 'next-auth';
import { authOptions } from '@/lib/auth/options';
import { apiErrorBody, errorHeaders, GatewayError, toGatewayError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { getLimiter } from '@/lib/gateway/runtime';

// Helpers for the dashboard/account route handlers (session- or IP-scoped, JSON in and out).

export interface ApiContext {
  requestId: string;
  ip: string;
}

type Handler<P> = (req: Request, ctx: ApiContext, params: P) => Promise<Response>;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** Wraps a route: request id, one error envelope, internal details only in the log. */
export function apiRoute<P = Record<string, string>>(handler: Handler<P>) {
  return async (req: Request, route: { params: Promise<P> }): Promise<Response> => {
    const ctx: ApiContext = { requestId: `req_${randomUUID().replace(/-/g, '')}`, ip: clientIp(req) };
    try {
      const res = await handler(req, ctx, await route.params);
      res.headers.set('x-request-id', ctx.requestId);
      return res;
    } catch (err) {
      const gwErr = toGatewayError(err);
      if (gwErr.status >= 500 && gwErr.code === 'internal_error') log('error', 'api route failed', { requestId: ctx.requestId, path: new URL(req.url).pathname, ...errorFields(err) });
      return json(apiErrorBody(gwErr), gwErr.status, { ...errorHeaders(gwErr), 'x-request-id': ctx.requestId });
    }
  };
}

/** The custom server overwrites x-forwarded-for with the socket address, so this is not spoofable there. */
export function clientIp(req: Request): string {
  const forwarded = req.headers.get('x-forwarded-for');
  return forwarded?.split(',')[0]?.trim() || 'unknown';
}

export async function readJson<T = Record<string, unknown>>(req: Request): Promise<T> {
  const type = req.headers.get('content-type') ?? '';
  if (!type.toLowerCase().includes('application/json')) {
    throw new GatewayError('unsupported_media_type', 'Send a JSON body with Content-Type: application/json.');
  }
  const text = await req.text();
  if (text.length > 64 * 1024) throw new GatewayError('body_too_large', 'Request body too large.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  return value as T;
}

export function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new GatewayError('invalid_request', `Field "${field}" is required and must be a string.`, { param: field });
  }
  return value;
}

/**
 * CSRF guard for cookie-authenticated mutations: a browser always sends Origin on cross-site
 * POST/DELETE, so a mismatching Origin is refused; JSON-only bodies also force a CORS preflight.
 */
export function assertSameOrigin(req: Request): void {
  const origin = req.headers.get('origin');
  if (!origin) return;
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new GatewayError('forbidden', 'Cross-site request refused.');
  }
  if (originHost !== host) throw new GatewayError('forbidden', 'Cross-site request refused.');
}

/** The signed-in account's id, or 401. Mutations also pass the CSRF guard. */
export async function requireUserId(req: Request): Promise<string> {
  if (req.method !== 'GET' && req.method !== 'HEAD') assertSameOrigin(req);
  const session = await getServerSession(authOptions);
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) throw new GatewayError('unauthenticated', 'Sign in first.');
  return id;
}

/** Sliding-window limit for the account endpoints (per IP or per user), answered as 429. */
export async function enforceLimit(key: string, limit: number, label: string): Promise<void> {
  const result = await getLimiter().admit({
    rules: [{ kind: 'window', key, limit, windowMs: 60_000, label }],
    leaseId: randomUUID(),
    leaseTtlMs: 1,
  });
  if (!result.ok && result.reason === 'limit') {
    throw new GatewayError('rate_limit_exceeded', `Rate limit exceeded: ${label}. Try again in ${Math.ceil(result.retryAfterMs / 1000)} s.`, {
      retryAfterMs: result.retryAfterMs,
    });
  }
}

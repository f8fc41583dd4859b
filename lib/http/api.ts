import { randomUUID } from 'node:crypto';
import { getServerSession } from 'next-auth';
import { authOptions } from '@/lib/auth/options';
import { apiErrorBody, codedError, errorHeaders, toGatewayError } from '@/lib/errors';
import { log, errorFields } from '@/lib/log';
import { getAccount } from '@/lib/dashboard/queries';
import { env } from '@/lib/env';
import { clientIpFrom } from '@/lib/keys/client-ip';
import { sessionIsCurrent } from '@/lib/auth/session-epoch';
import { originOf, requestOrigin } from '@/lib/auth/request-origin';
import { actingForRequest, type Acting } from '@/lib/orgs/access';

export { enforceLimit } from '@/lib/limits/enforce';
export { requestOrigin };

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
      if (gwErr.status >= 500 && gwErr.code === 'internal_error')
        log('error', 'api route failed', { requestId: ctx.requestId, path: new URL(req.url).pathname, ...errorFields(err) });
      return json(apiErrorBody(gwErr), gwErr.status, { ...errorHeaders(gwErr), 'x-request-id': ctx.requestId });
    }
  };
}

/**
 * The client address of a route handler's request (lib/keys/client-ip.ts). The custom server
 * replaces X-Forwarded-For with the address it resolved from the socket, so there this is exact.
 */
export function clientIp(req: Request): string {
  return clientIpFrom(undefined, req.headers.get('x-forwarded-for') ?? undefined);
}

export async function readJson<T = Record<string, unknown>>(req: Request): Promise<T> {
  const type = req.headers.get('content-type') ?? '';
  if (!type.toLowerCase().includes('application/json')) {
    throw codedError('unsupported_media_type', 'request.not_json');
  }
  const text = await req.text();
  if (text.length > 64 * 1024) throw codedError('body_too_large', 'request.too_large');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw codedError('invalid_json', 'request.invalid_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw codedError('invalid_request', 'request.not_object');
  }
  return value as T;
}

export function requireString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw codedError('invalid_request', 'request.field_required', { field }, { param: field });
  }
  return value;
}

/**
 * The origins this app is served from: PUBLIC_BASE_URL and NEXTAUTH_URL when set, and the one the
 * request came in on. This server speaks plain HTTP, so that is `http://<Host>`; only with
 * TRUST_PROXY=1 do X-Forwarded-Proto and X-Forwarded-Host (set by the proxy in front) say otherwise,
 * as a client can send them too.
 */
export function appOrigins(req: Request): Set<string> {
  const origins = new Set<string>();
  for (const configured of [env.PUBLIC_BASE_URL, env.NEXTAUTH_URL]) {
    const origin = configured ? originOf(configured) : null;
    if (origin) origins.add(origin);
  }
  const origin = requestOrigin(req.headers);
  if (origin) origins.add(origin);
  return origins;
}

/**
 * CSRF guard for cookie-authenticated mutations: the request's Origin, or its Referer when a
 * browser sent no Origin, must be one of appOrigins (scheme, host and port). A request with
 * neither is refused too (`required`): browsers send at least one on every cross-site request,
 * but not every setup does both, and a guard that passes on "no header" passes whatever strips it.
 * Not required on login and registration, which programmatic clients call without a session.
 */
export function assertSameOrigin(req: Request, opts: { required: boolean } = { required: true }): void {
  const origin = req.headers.get('origin');
  const referer = req.headers.get('referer');
  const claimed = origin !== null ? origin : referer;
  if (claimed === null) {
    if (opts.required) throw codedError('forbidden', 'request.cross_site_no_origin');
    return;
  }
  const normalised = originOf(claimed);
  if (!normalised || !appOrigins(req).has(normalised)) throw codedError('forbidden', 'request.cross_site');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The signed-in account's id, or 401. Mutations also pass the CSRF guard and are refused (403) for
 * a suspended account: its session stays valid for reading its own data (keys, logs, ledger), but
 * it can no longer create keys, recharge or change anything.
 */
export async function requireUserId(req: Request): Promise<string> {
  return (await requireActor(req)).accountId;
}

const actingByRequest = new WeakMap<Request, Acting>();

/**
 * The account a dashboard call acts on (the selected organization's, or the person's own) and the
 * person and role acting, checked against the role table of lib/orgs/roles.ts (403 otherwise).
 * requireUserId answers its `accountId`, so every route keyed by account works for organizations.
 */
export async function requireActor(req: Request): Promise<Acting> {
  const known = actingByRequest.get(req);
  if (known) return known;
  const personId = await requireSessionPerson(req);
  const acting = await actingForRequest(req, personId);
  if (!acting.personal && !SAFE_METHODS.has(req.method)) {
    const org = await getAccount(acting.accountId);
    if (!org) throw codedError('forbidden', 'org.not_member');
    if (org.status === 'suspended') throw codedError('account_suspended', 'auth.suspended_read_only');
  }
  actingByRequest.set(req, acting);
  return acting;
}

async function requireSessionPerson(req: Request): Promise<string> {
  const mutation = !SAFE_METHODS.has(req.method);
  if (mutation) assertSameOrigin(req);
  const session = await getServerSession(authOptions);
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!id) throw codedError('unauthenticated', 'auth.sign_in_first');
  // One read per dashboard call: the account may have ended this session (sign out everywhere).
  const account = await getAccount(id);
  if (!account || !sessionIsCurrent((session as { authTime?: unknown }).authTime, account.sessionsValidFrom)) {
    throw codedError('unauthenticated', 'auth.sign_in_first');
  }
  if (mutation) {
    if (account.status === 'suspended') {
      throw codedError('account_suspended', 'auth.suspended_read_only');
    }
  }
  return id;
}

import { env } from '@/lib/env';
import { requestOrigin } from '@/lib/http/api';

/** The origin links in mail and Stripe return URLs point at: PUBLIC_BASE_URL when set, else the one the request came in on. */
export function publicOriginOf(req: Request): string {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return requestOrigin(req.headers) ?? 'http://localhost:3000';
}

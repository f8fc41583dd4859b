import { headers } from 'next/headers';
import { env } from '@/lib/env';

/** The public origin shown in snippets: PUBLIC_BASE_URL when set, else the host this request came in on. */
export async function publicOrigin(): Promise<string> {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const h = await headers();
  const host = h.get('x-forwarded-host') ?? h.get('host') ?? 'localhost:3000';
  const proto = h.get('x-forwarded-proto')?.split(',')[0]?.trim() ?? (/^(localhost|127\.|\[::1\])/.test(host) ? 'http' : 'https');
  return `${proto}://${host}`;
}

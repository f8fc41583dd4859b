import { headers } from 'next/headers';
import { env } from '@/lib/env';
import { requestOrigin } from '@/lib/http/api';

/** The public origin shown in snippets: PUBLIC_BASE_URL when set, else the origin this request came in on (TRUST_PROXY honoured). */
export async function publicOrigin(): Promise<string> {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return requestOrigin(await headers()) ?? 'http://localhost:3000';
}

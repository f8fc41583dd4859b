import { env } from '@/lib/env';

/** `scheme://host[:port]` of a URL or host text, normalised as browsers send it (default ports dropped); null if unparsable. */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

const firstValue = (value: string | null) => value?.split(',')[0]?.trim() || null;

/**
 * The origin a request came in on: `http://<Host>`, or with TRUST_PROXY=1 what X-Forwarded-Proto
 * and X-Forwarded-Host (set by the proxy in front) say. Null when it cannot be told.
 */
export function requestOrigin(headers: Pick<Headers, 'get'>): string | null {
  const host = (env.TRUST_PROXY ? firstValue(headers.get('x-forwarded-host')) : null) ?? headers.get('host');
  const proto = (env.TRUST_PROXY ? firstValue(headers.get('x-forwarded-proto')) : null) ?? 'http';
  if (!host || !/^https?$/i.test(proto)) return null;
  return originOf(`${proto.toLowerCase()}://${host}`);
}

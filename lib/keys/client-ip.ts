import { env, type TrustProxy } from '@/lib/env';
import { ipMatcher, normaliseIp } from '@/lib/keys/controls';

// The one reading of a request's client address: key IP allowlists, per-IP limits, the login
// throttle and the logs all take it from here. An appending proxy (nginx's
// $proxy_add_x_forwarded_for, an AWS ALB) keeps whatever X-Forwarded-For the client sent and adds the
// address it saw on the right, so only entries added by proxies we trust say anything: the leftmost
// entry is whatever the client wrote.

let trustedRanges: { source: string[]; matches: (ip: string) => boolean } | undefined;

function isTrusted(ranges: string[], ip: string): boolean {
  if (trustedRanges?.source !== ranges) trustedRanges = { source: ranges, matches: ipMatcher(ranges) };
  return trustedRanges.matches(ip);
}

/** The entries of X-Forwarded-For (every copy of the header, in order), left to right. */
function forwardedEntries(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
}

/** An entry as logged and matched: a bare address (an IPv4-mapped IPv6 one as IPv4), else the text, capped. */
function tidy(entry: string): string {
  return normaliseIp(entry)?.address ?? entry.slice(0, 64);
}

/**
 * The client's address. `socket`: the connection's peer, when this process can see it (undefined
 * in route handlers under `next start`, which see only headers). `forwardedFor`: the request's
 * X-Forwarded-For. `trust` (TRUST_PROXY): with none, the socket's address; with n trusted hops,
 * the n-th entry from the right (what the outermost trusted proxy saw); with trusted ranges, the
 * first address from the right (the socket's first) that is not a trusted proxy.
 */
export function clientIpFrom(socket: string | undefined, forwardedFor: string | string[] | undefined, trust: TrustProxy = env.TRUST_PROXY): string {
  const entries = forwardedEntries(forwardedFor);
  if (!trust) {
    // No socket: a route handler under `next start`, where Next.js fills the header from the socket
    // when the client sent none; its last entry is the closest to the truth it has.
    return socket ?? (entries.length > 0 ? tidy(entries[entries.length - 1]) : 'unknown');
  }
  if ('hops' in trust) {
    // Fewer entries than hops: the request came in past some of the proxies; the leftmost is the
    // first one a trusted proxy wrote.
    if (entries.length === 0) return socket ?? 'unknown';
    return tidy(entries[Math.max(0, entries.length - trust.hops)]);
  }
  if (socket !== undefined && !isTrusted(trust.ranges, socket)) return socket; // not from a proxy: its header is the client's own
  for (let i = entries.length - 1; i >= 0; i--) {
    if (!isTrusted(trust.ranges, entries[i])) return tidy(entries[i]);
  }
  // Every hop is a trusted proxy: the request started inside them.
  return entries.length > 0 ? tidy(entries[0]) : (socket ?? 'unknown');
}

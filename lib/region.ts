// Where a request may be served (issue 43 item 4). Channels declare a `region` in the operator
// config; a request asks for one with `service.region` in its body (chat, embeddings, Responses) or
// the `x-service-region` header (every surface); an account or key may be pinned to one. Routing,
// fallback included, then uses only that region's channels, and when none of them can serve the
// answer is a 503 naming the region: never a silent route elsewhere.
import type { ChannelInfo } from '@/lib/config';
import { codedError, GatewayError } from '@/lib/errors';
import { isObject, type JsonObject } from '@/lib/json';

export const REGION_HEADER = 'x-service-region';
export const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;

function parse(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !REGION_PATTERN.test(value.trim().toLowerCase())) {
    throw new GatewayError('invalid_request', `${param} must be a region name such as cn, eu or us (lower-case letters, digits and dashes).`, { param });
  }
  return value.trim().toLowerCase();
}

/**
 * The region this request must be served in, or null (anywhere): the pin (key, then account) or
 * what the request asked for. A request asking for another region than its pin is refused (403).
 */
export function requestRegion(header: string | undefined, body: JsonObject | undefined, pins: { key?: string | null; account?: string | null }): string | null {
  const service = body?.service;
  const fromBody = isObject(service) ? parse(service.region, 'service.region') : undefined;
  const fromHeader = parse(header, REGION_HEADER);
  if (fromBody && fromHeader && fromBody !== fromHeader) {
    throw new GatewayError('invalid_request', `service.region "${fromBody}" and the ${REGION_HEADER} header "${fromHeader}" disagree.`, {
      param: 'service.region',
    });
  }
  const asked = fromBody ?? fromHeader;
  const pin = pins.key ?? pins.account ?? null;
  if (pin && asked && asked !== pin) {
    const who = pins.key ? 'This API key' : 'This account';
    throw new GatewayError('region_not_allowed', `${who} is pinned to region "${pin}"; it cannot be served in region "${asked}".`, {
      param: fromBody ? 'service.region' : REGION_HEADER,
    });
  }
  return pin ?? asked ?? null;
}

/** The channels of `region` among `channels` (all of them when no region applies). */
export function inRegion(channels: ChannelInfo[], region: string | null): ChannelInfo[] {
  return region === null ? channels : channels.filter((c) => c.region === region);
}

/** No channel of the region can serve: a 503 naming the region (and what it was asked for). */
export function regionUnavailable(region: string, models: string[]): GatewayError {
  return new GatewayError(
    'region_unavailable',
    `No channel in region "${region}" can serve ${models.join(', ')} right now; the request was not sent to another region.`,
    { param: 'service.region' },
  );
}

/** A key's `region` on POST /api/keys and PATCH /api/keys/:id (null clears the pin), as Prisma data. */
export function keyRegionData(body: Record<string, unknown>): { region?: string | null } {
  const v = body.region;
  if (v === undefined) return {};
  if (v === null || v === '') return { region: null };
  if (typeof v !== 'string' || !REGION_PATTERN.test(v)) throw codedError('invalid_request', 'key.region', undefined, { param: 'region' });
  return { region: v };
}

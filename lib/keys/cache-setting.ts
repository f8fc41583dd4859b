import { getConfig } from '@/lib/config';
import { codedError } from '@/lib/errors';

// A key's opt-in to the response cache (lib/gateway/response-cache.ts): `response_cache_ttl_seconds`
// on POST /api/keys and PATCH /api/keys/:id, a whole number of seconds up to the operator's
// `response_cache.max_ttl_seconds`, or null (cached only when a request asks).

export const KEY_CACHE_FIELD = 'response_cache_ttl_seconds';

/** The Prisma data of the field when the body has it (a 400 naming it when it is not valid). */
export function responseCacheData(body: Record<string, unknown>): { responseCacheTtl?: number | null } {
  const v = body[KEY_CACHE_FIELD];
  if (v === undefined) return {};
  if (v === null) return { responseCacheTtl: null };
  const max = getConfig().responseCache.maxTtlSeconds;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) {
    throw codedError('invalid_request', 'key.response_cache_ttl', { max }, { param: KEY_CACHE_FIELD });
  }
  return { responseCacheTtl: v };
}

/** The field as the key API shows it. */
export function responseCacheJson(row: { responseCacheTtl?: number | null }) {
  return { [KEY_CACHE_FIELD]: row.responseCacheTtl ?? null };
}

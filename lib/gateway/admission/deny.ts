// Deny markers (lib/events.ts): a key or account suspended, revoked or edited since this instance
// cached it, while its invalidation message is still on its way.
import { GatewayError } from '@/lib/errors';
import { forgetPrincipal, type Principal } from '@/lib/auth/principal';
import { getLimiter } from '@/lib/limits/runtime';
import { refreshedPrincipal } from '@/lib/auth/admission';

/**
 * The refusal for deny marker `index`: refused now; the principal is reloaded from the database
 * next time.
 */
export function refuseDenied(principal: Principal, index: number): GatewayError {
  forgetPrincipal(principal.keyHash);
  if (index === 0) return new GatewayError('account_suspended', 'This account is suspended.');
  if (index === 2) return new GatewayError('unavailable', 'This API key was just edited. Please retry.', { retryAfterMs: 1000 });
  return new GatewayError('invalid_api_key', 'Invalid or revoked API key.');
}

/**
 * For requests that admit nothing (model lists): the deny markers hold there too. Answers the
 * caller as it is now (reloaded when its key was edited since it was cached; `ip` is checked then).
 */
export async function checkDenied(principal: Principal, ip = ''): Promise<Principal> {
  let index: number;
  try {
    index = await getLimiter().denied(principal.denyKeys);
  } catch {
    return principal; // Redis unreachable: the cached copy and its TTL decide, as for every other check
  }
  if (index === 2) return refreshedPrincipal(principal, null, ip);
  if (index >= 0) throw refuseDenied(principal, index);
  return principal;
}

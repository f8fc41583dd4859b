import { formatPico } from '@/lib/money';
import type { AccountSummary, accountDetail } from './accounts';

/**
 * JSON for the admin API: bigint pico-USD fields (`fooPico`, `fooCnyPico`) become exact decimal text
 * under `fooUsd` / `fooCny`; other bigints become text; dates ISO.
 */
export function toJson(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toJson);
  if (value && typeof value === 'object') {
    if (typeof (value as { toFixed?: unknown }).toFixed === 'function') return (value as { toFixed(n: number): string }).toFixed(12);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'bigint' && key.endsWith('Pico')) out[key.replace(/CnyPico$/, 'Cny').replace(/Pico$/, 'Usd')] = formatPico(v);
      else out[key] = toJson(v);
    }
    return out;
  }
  return value;
}

export function serializeAccount(a: AccountSummary) {
  return {
    id: a.id,
    email: a.email,
    tier: a.tier,
    tier_pinned: a.tierLocked,
    status: a.status,
    role: a.role,
    balance_usd: formatPico(a.balancePico),
    limits: a.limits,
    region: a.region,
    created_at: a.createdAt.toISOString(),
  };
}

export function serializeDetail(d: Awaited<ReturnType<typeof accountDetail>>) {
  return { account: serializeAccount(d.account), keys: d.keys, requests: toJson(d.requests), ledger: toJson(d.ledger) };
}

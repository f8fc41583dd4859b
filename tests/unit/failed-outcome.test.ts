import { describe, it, expect } from 'vitest';
import { FAILED_CONDITION, isFailedOutcome } from '@/lib/billing/failed';
import { safeCallbackPath } from '@/lib/dashboard/session';

describe('one definition of a failed request', () => {
  it('counts every outcome but an answer and a client that left as failed', () => {
    expect(isFailedOutcome('ok')).toBe(false);
    expect(isFailedOutcome('client_closed')).toBe(false);
    for (const o of ['invalid_request', 'insufficient_balance', 'rate_limited', 'upstream_error', 'model_not_found']) expect(isFailedOutcome(o)).toBe(true);
  });

  it('says the same in SQL', () => {
    expect(FAILED_CONDITION).toBe(`"outcome" NOT IN ('ok', 'client_closed')`);
  });
});

describe('the way back after sign-in', () => {
  it('keeps same-origin paths of the dashboard and the console, with their query', () => {
    expect(safeCallbackPath('/admin/accounts/abc')).toBe('/admin/accounts/abc');
    expect(safeCallbackPath('/dashboard/logs?status=error')).toBe('/dashboard/logs?status=error');
  });

  it('refuses anything that could leave the origin', () => {
    for (const bad of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)', '/ok\nLocation: x', ''])
      expect(safeCallbackPath(bad)).toBe('/dashboard');
  });
});

// A key's expiry is typed and shown in the viewer's own zone, as every time on the dashboard.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { EMPTY_CONTROLS, bodyOf, valuesOf } from '@/components/dashboard/key-controls-form';

const before = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Asia/Shanghai';
});
afterAll(() => {
  process.env.TZ = before;
});

describe('the key form in Asia/Shanghai', () => {
  it('shows a stored expiry in local time and sends what is typed back as the same instant', () => {
    const key = {
      budget_usd: null,
      monthly_budget_usd: null,
      models: [],
      rpm: null,
      concurrency: null,
      allowed_ips: [],
      expires_at: '2026-12-01T00:00:00.000Z',
    };
    const values = valuesOf(key as unknown as Parameters<typeof valuesOf>[0]);
    expect(values.expires_at).toBe('2026-12-01T08:00');
    expect(bodyOf(values).expires_at).toBe('2026-12-01T00:00:00.000Z');
  });

  it('sends text it cannot read as typed, for the server to refuse by name', () => {
    expect(bodyOf({ ...EMPTY_CONTROLS, expires_at: 'tomorrow' }).expires_at).toBe('tomorrow');
    expect(bodyOf(EMPTY_CONTROLS).expires_at).toBeNull();
  });
});

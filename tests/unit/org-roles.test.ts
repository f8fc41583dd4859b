// The organization role table (lib/orgs/roles.ts): what each role may call and see.
import { describe, expect, it } from 'vitest';
import { apiAllowed, orgAllowed, pageAllowed } from '@/lib/orgs/roles';
import { readInvitationToken, invitationToken } from '@/lib/orgs/queries';

describe('organization roles', () => {
  it('gives each role its API calls and refuses the rest', () => {
    expect(apiAllowed('owner', 'POST', '/api/some/new/route')).toBe(true);
    expect(apiAllowed('admin', 'POST', '/api/some/new/route')).toBe(false);
    expect(apiAllowed('admin', 'POST', '/api/keys')).toBe(true);
    expect(apiAllowed('admin', 'POST', '/api/payment/recharge')).toBe(false);
    expect(apiAllowed('billing', 'POST', '/api/payment/recharge')).toBe(true);
    expect(apiAllowed('billing', 'GET', '/api/keys')).toBe(false);
    expect(apiAllowed('billing', 'GET', '/api/usage')).toBe(true);
    expect(apiAllowed('developer', 'GET', '/api/usage')).toBe(false);
    expect(apiAllowed('developer', 'DELETE', '/api/keys/0b6f0f0e-0000-4000-8000-000000000000')).toBe(true);
    expect(apiAllowed('developer', 'POST', '/api/playground/token')).toBe(true);
    expect(apiAllowed('billing', 'GET', '/api/alerts/settings')).toBe(true);
    expect(apiAllowed('billing', 'PATCH', '/api/alerts/settings')).toBe(false);
  });
  it('guards pages and organization actions', () => {
    expect(pageAllowed('billing', '/dashboard/keys')).toBe(false);
    expect(pageAllowed('developer', '/dashboard/billing')).toBe(false);
    expect(pageAllowed('developer', '/dashboard')).toBe(true);
    expect(orgAllowed('admin', 'transfer')).toBe(false);
    expect(orgAllowed('owner', 'delete')).toBe(true);
    expect(orgAllowed('billing', 'invite')).toBe(false);
  });
  it('accepts only untampered invitation tokens', () => {
    const token = invitationToken('0b6f0f0e-0000-4000-8000-000000000000', new Date(Date.now() + 60_000));
    expect(readInvitationToken(token)?.id).toBe('0b6f0f0e-0000-4000-8000-000000000000');
    const [id, exp, mac] = token.split('.');
    expect(readInvitationToken(`${id}.${(parseInt(exp!, 36) + 1).toString(36)}.${mac}`)).toBeNull();
    expect(readInvitationToken('nonsense')).toBeNull();
  });
});

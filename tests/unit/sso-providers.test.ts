// The next-auth providers made from the SSO configuration (lib/auth/sso-providers.ts): their callback
// URL is the request's own (lib/auth/origin-rebase.ts authBaseUrl), the code is exchanged with that
// same URL, the checks are the ones the decision names, and the verified-email reading is strict.
import { describe, expect, it, vi } from 'vitest';
import { ssoProviders } from '@/lib/auth/sso-providers';
import { ssoProviderConfigs } from '@/lib/auth/sso-config';
import { authBaseUrl } from '@/lib/auth/origin-rebase';

const configs = ssoProviderConfigs({
  OIDC_ISSUER: 'https://idp.example.com/realms/acme',
  OIDC_CLIENT_ID: 'gw',
  OIDC_CLIENT_SECRET: 'secret',
  OIDC_NAME: 'Acme',
  GITHUB_CLIENT_ID: 'gh',
  GITHUB_CLIENT_SECRET: 'ghs',
});
type Loose = Record<string, unknown>;

describe('authBaseUrl', () => {
  const req = (headers: Record<string, string>) => new Request('http://ignored/api/auth/signin/oidc', { headers });

  it("is under NEXTAUTH_URL when set, as next-auth reads it, else on the request's Host", () => {
    expect(authBaseUrl(req({ host: 'gw.internal:8080' }), 'https://gw.example.com')).toBe('https://gw.example.com/api/auth');
    expect(authBaseUrl(req({ host: 'gw.internal:8080' }), 'https://gw.example.com/custom/auth/')).toBe('https://gw.example.com/custom/auth');
    expect(authBaseUrl(req({ host: 'gw.internal:8080' }), undefined)).toBe('http://gw.internal:8080/api/auth');
    expect(authBaseUrl(req({}), undefined)).toBe('http://localhost:3000/api/auth');
  });
});

describe('ssoProviders', () => {
  const [oidc, github] = ssoProviders(configs, 'https://gw.example.com/api/auth') as unknown as Loose[];

  it('registers the callback URL on the request origin, and checks state, nonce and PKCE for OIDC', () => {
    expect(oidc).toMatchObject({
      id: 'oidc',
      name: 'Acme',
      type: 'oauth',
      wellKnown: 'https://idp.example.com/realms/acme/.well-known/openid-configuration',
      idToken: true,
      clientId: 'gw',
      client: { redirect_uris: ['https://gw.example.com/api/auth/callback/oidc'] },
    });
    expect([...(oidc.checks as string[])].sort()).toEqual(['nonce', 'pkce', 'state']);
    expect(github).toMatchObject({ id: 'github', checks: ['state'], client: { redirect_uris: ['https://gw.example.com/api/auth/callback/github'] } });
  });

  it('exchanges the code with that same URL: the id-token-verifying callback for OIDC, the OAuth one for GitHub', async () => {
    const client = { callback: vi.fn(async () => ({ id_token: 'x' })), oauthCallback: vi.fn(async () => ({ access_token: 'y' })) };
    const params = { code: 'c', state: 's' };
    const checks = { state: 's', nonce: 'n', code_verifier: 'v' };
    const request = (p: Loose) => (p.token as { request: (ctx: unknown) => Promise<unknown> }).request;
    await request(oidc)({ params, checks, client });
    expect(client.callback).toHaveBeenCalledWith('https://gw.example.com/api/auth/callback/oidc', params, checks);
    await request(github)({ params, checks, client });
    expect(client.oauthCallback).toHaveBeenCalledWith('https://gw.example.com/api/auth/callback/github', params, checks);
  });

  it('maps the profile to subject, email and whether the provider verified it', () => {
    const profile = (p: Loose) => p.profile as (claims: Record<string, unknown>) => Record<string, unknown>;
    expect(profile(oidc)({ sub: 'abc', email: 'a@example.com', email_verified: true, name: 'A' })).toEqual({
      id: 'abc',
      email: 'a@example.com',
      name: 'A',
      emailVerified: true,
    });
    expect(profile(oidc)({ sub: 'abc', email: 'a@example.com', email_verified: 'false' }).emailVerified).toBe(false);
    expect(profile(oidc)({ sub: 'abc', email_verified: true }).emailVerified).toBe(false);
    expect(profile(github)({ id: 42, login: 'octo', email: 'o@example.com', email_verified: true })).toEqual({
      id: '42',
      email: 'o@example.com',
      name: 'octo',
      emailVerified: true,
    });
  });
});

// The operator's SSO variables (lib/auth/sso-config.ts): which providers they make, which half-set
// ones stop the start-up (and naming what), and the verified-email readings the linking rule trusts.
import { describe, expect, it } from 'vitest';
import { discoveryUrl, githubVerifiedEmail, oidcEmailVerified, oidcIssuer, ssoConfigProblems, ssoProviderConfigs } from '@/lib/auth/sso-config';
import { parseSsoDomains } from '@/lib/orgs/sso';
import { GatewayError } from '@/lib/errors';

const oidc = { OIDC_ISSUER: 'https://idp.example.com/realms/acme', OIDC_CLIENT_ID: 'gateway', OIDC_CLIENT_SECRET: 's3cret' };

describe('ssoProviderConfigs', () => {
  it('makes nothing without variables', () => {
    expect(ssoProviderConfigs({})).toEqual([]);
    expect(ssoConfigProblems({})).toEqual([]);
  });

  it('makes the generic OIDC provider with id oidc, the default label, and the issuer as given', () => {
    expect(ssoProviderConfigs(oidc)).toEqual([
      { id: 'oidc', name: 'SSO', kind: 'oidc', issuer: 'https://idp.example.com/realms/acme', clientId: 'gateway', clientSecret: 's3cret' },
    ]);
    expect(ssoProviderConfigs({ ...oidc, OIDC_NAME: ' Acme Okta ' })[0].name).toBe('Acme Okta');
  });

  it('takes the issuer also as its discovery URL or with a trailing slash', () => {
    const fromDiscovery = ssoProviderConfigs({ ...oidc, OIDC_ISSUER: 'https://idp.example.com/realms/acme/.well-known/openid-configuration' });
    expect(fromDiscovery[0].issuer).toBe('https://idp.example.com/realms/acme');
    expect(ssoProviderConfigs({ ...oidc, OIDC_ISSUER: 'https://idp.example.com/' })[0].issuer).toBe('https://idp.example.com');
    expect(discoveryUrl('https://idp.example.com/realms/acme')).toBe('https://idp.example.com/realms/acme/.well-known/openid-configuration');
  });

  it('makes the Google and GitHub presets from their id and secret, the organization IdP first', () => {
    const all = ssoProviderConfigs({ ...oidc, GITHUB_CLIENT_ID: 'gh', GITHUB_CLIENT_SECRET: 'ghs', GOOGLE_CLIENT_ID: 'go', GOOGLE_CLIENT_SECRET: 'gos' });
    expect(all.map((p) => [p.id, p.name, p.kind])).toEqual([
      ['oidc', 'SSO', 'oidc'],
      ['google', 'Google', 'oidc'],
      ['github', 'GitHub', 'github'],
    ]);
    expect(all[1].issuer).toBe('https://accounts.google.com');
  });

  it('refuses http issuers except on this machine, and URLs with a query', () => {
    expect(oidcIssuer('http://idp.example.com')).toBeNull();
    expect(oidcIssuer('https://idp.example.com?x=1')).toBeNull();
    expect(oidcIssuer('not a url')).toBeNull();
    expect(oidcIssuer('http://127.0.0.1:4000/')).toBe('http://127.0.0.1:4000');
    expect(oidcIssuer('http://localhost:4000')).toBe('http://localhost:4000');
    const problems = ssoConfigProblems({ ...oidc, OIDC_ISSUER: 'http://idp.example.com' });
    expect(problems.map((p) => p.variable)).toEqual(['OIDC_ISSUER']);
    expect(problems[0].message).toMatch(/https/);
    expect(ssoProviderConfigs({ ...oidc, OIDC_ISSUER: 'http://idp.example.com' })).toEqual([]);
  });
});

describe('ssoConfigProblems', () => {
  it('names each missing variable of a half-set OIDC provider', () => {
    const problems = ssoConfigProblems({ OIDC_ISSUER: oidc.OIDC_ISSUER });
    expect(problems.map((p) => p.variable)).toEqual(['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET']);
    expect(problems[0].message).toBe('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together: OIDC_CLIENT_ID is missing');
    expect(ssoProviderConfigs({ OIDC_ISSUER: oidc.OIDC_ISSUER })).toEqual([]);
  });

  it('refuses OIDC_NAME alone, and a preset with only one of id and secret', () => {
    expect(ssoConfigProblems({ OIDC_NAME: 'Okta' }).map((p) => p.variable)).toEqual(['OIDC_NAME']);
    expect(ssoConfigProblems({ GITHUB_CLIENT_ID: 'gh' })).toEqual([
      { variable: 'GITHUB_CLIENT_SECRET', message: 'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET are set together: GITHUB_CLIENT_SECRET is missing' },
    ]);
    expect(ssoConfigProblems({ GOOGLE_CLIENT_SECRET: 'gos' }).map((p) => p.variable)).toEqual(['GOOGLE_CLIENT_ID']);
  });

  it('treats blank values as unset', () => {
    expect(ssoConfigProblems({ OIDC_ISSUER: ' ', OIDC_CLIENT_ID: '', GITHUB_CLIENT_ID: '  ' })).toEqual([]);
    expect(ssoProviderConfigs({ ...oidc, OIDC_CLIENT_SECRET: ' ' })).toEqual([]);
  });
});

describe('verified emails', () => {
  it('counts only an email_verified that is true', () => {
    expect(oidcEmailVerified({ email_verified: true })).toBe(true);
    expect(oidcEmailVerified({ email_verified: 'true' })).toBe(true);
    for (const v of [false, 'false', undefined, null, 1, 'yes']) expect(oidcEmailVerified({ email_verified: v })).toBe(false);
    expect(oidcEmailVerified({})).toBe(false);
  });

  it("takes GitHub's primary address only when GitHub verified it", () => {
    expect(
      githubVerifiedEmail([
        { email: 'old@example.com', primary: false, verified: true },
        { email: 'me@example.com', primary: true, verified: true },
      ]),
    ).toBe('me@example.com');
    expect(
      githubVerifiedEmail([
        { email: 'verified@example.com', primary: false, verified: true },
        { email: 'me@example.com', primary: true, verified: false },
      ]),
    ).toBeNull();
    expect(githubVerifiedEmail({ message: 'Bad credentials' })).toBeNull();
    expect(githubVerifiedEmail([])).toBeNull();
  });
});

describe('parseSsoDomains', () => {
  const refusal = (value: unknown) => {
    try {
      parseSsoDomains(value);
    } catch (err) {
      return err instanceof GatewayError ? [err.status, err.messageCode] : err;
    }
    return null;
  };

  it('lower-cases, drops a leading @ and a trailing dot, and lists each once, sorted', () => {
    expect(parseSsoDomains(['Example.COM', '@corp.example.org', 'example.com.', 'xn--bcher-kva.example'])).toEqual([
      'corp.example.org',
      'example.com',
      'xn--bcher-kva.example',
    ]);
    expect(parseSsoDomains([])).toEqual([]);
  });

  it('refuses what is no domain, public mail services, and more than 20', () => {
    expect(refusal('example.com')).toEqual([400, 'org.sso_domains_invalid']);
    expect(refusal([42])).toEqual([400, 'org.sso_domains_invalid']);
    expect(refusal(['localhost'])).toEqual([400, 'org.sso_domain_invalid']);
    expect(refusal(['exa mple.com'])).toEqual([400, 'org.sso_domain_invalid']);
    expect(refusal(['-bad.example.com'])).toEqual([400, 'org.sso_domain_invalid']);
    expect(refusal(['10.0.0.1'])).toEqual([400, 'org.sso_domain_invalid']);
    expect(refusal(['Gmail.com'])).toEqual([400, 'org.sso_domain_public']);
    expect(refusal(Array.from({ length: 21 }, (_, i) => `d${i}.example.com`))).toEqual([400, 'org.sso_domains_invalid']);
  });
});

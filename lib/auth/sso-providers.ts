// next-auth 4 providers for the operator's single sign-on (lib/auth/sso-config.ts; docs/decisions/052).
// Each maps the provider's answer to { id: subject, email, emailVerified } for the linking rule in
// lib/auth/sso.ts, where only a verified email links or creates an account.
import type { User } from 'next-auth';
import type { OAuthConfig } from 'next-auth/providers/oauth';
import type { BaseClient, TokenSet, TokenSetParameters } from 'openid-client';
import { discoveryUrl, githubVerifiedEmail, oidcEmailVerified, type SsoProviderConfig } from './sso-config';

/** The user next-auth hands the signIn callback for an SSO sign-in. */
export interface SsoUser extends User {
  emailVerified: boolean;
}

type Claims = Record<string, unknown>;

function ssoUser(claims: Claims, subject: unknown): SsoUser {
  const email = typeof claims.email === 'string' ? claims.email : null;
  const name = typeof claims.name === 'string' ? claims.name : typeof claims.login === 'string' ? claims.login : null;
  return { id: String(subject), email, name, emailVerified: email !== null && oidcEmailVerified(claims) };
}

/**
 * The callback URL next-auth would use is built from NEXTAUTH_URL, and without it from
 * http://localhost:3000, whatever host the browser came on (lib/auth/origin-rebase.ts rebases what it
 * answers, but not the redirect_uri inside the identity provider's URL, nor the one sent with the code).
 * So the client's redirect_uri is the request's own callback URL, and the code is exchanged with it:
 * the same call next-auth makes (id token verified: signature, issuer, audience, expiry, nonce), on
 * the right URL.
 */
function onCallbackUrl(callbackUrl: string, kind: SsoProviderConfig['kind']) {
  return {
    client: { redirect_uris: [callbackUrl] },
    token: {
      async request({
        params,
        checks,
        client,
      }: {
        params: Parameters<BaseClient['callback']>[1];
        checks: Parameters<BaseClient['callback']>[2];
        client: BaseClient;
      }) {
        const tokens = kind === 'oidc' ? await client.callback(callbackUrl, params, checks) : await client.oauthCallback(callbackUrl, params, checks);
        return { tokens };
      },
    },
  };
}

function oidcProvider(c: SsoProviderConfig, callbackUrl: string): OAuthConfig<Claims> {
  return {
    id: c.id,
    name: c.name,
    type: 'oauth',
    wellKnown: discoveryUrl(c.issuer!),
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    authorization: { params: { scope: 'openid email profile' } },
    idToken: true,
    checks: ['pkce', 'state', 'nonce'],
    ...onCallbackUrl(callbackUrl, 'oidc'),
    userinfo: {
      // The id token's claims (verified above); a provider that keeps email and email_verified to
      // its userinfo endpoint (as conforming ones may with the code flow) is asked there, for the
      // same subject (openid-client checks the userinfo `sub` against the id token's).
      async request({ tokens: set, client }: { tokens: TokenSetParameters; client: BaseClient }) {
        // next-auth passes the TokenSet of the exchange (typed as its parameters).
        const tokens = set as TokenSet;
        const claims = tokens.claims() as Claims;
        if (claims.email !== undefined && claims.email_verified !== undefined) return claims;
        if (!client.issuer.metadata.userinfo_endpoint || !tokens.access_token) return claims;
        const info = (await client.userinfo(tokens)) as Claims;
        return { ...info, ...claims, email: claims.email ?? info.email, email_verified: claims.email_verified ?? info.email_verified };
      },
    },
    profile: (claims) => ssoUser(claims, claims.sub),
  };
}

const GITHUB_API = 'https://api.github.com';

function githubProvider(c: SsoProviderConfig, callbackUrl: string): OAuthConfig<Claims> {
  return {
    id: 'github',
    name: c.name,
    type: 'oauth',
    issuer: 'https://github.com/login/oauth',
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    authorization: { url: 'https://github.com/login/oauth/authorize', params: { scope: 'read:user user:email' } },
    // GitHub's OAuth 2 has no id token and no nonce; state guards the callback as in next-auth's preset.
    checks: ['state'],
    ...onCallbackUrl(callbackUrl, 'github'),
    userinfo: {
      url: `${GITHUB_API}/user`,
      // The profile's public email may be any address; only the primary one GitHub verified counts.
      async request({ tokens }: { tokens: TokenSetParameters }) {
        const headers = { authorization: `Bearer ${tokens.access_token}`, accept: 'application/vnd.github+json', 'user-agent': 'model-gateway' };
        const user = (await (await fetch(`${GITHUB_API}/user`, { headers })).json()) as Claims;
        const emails = await fetch(`${GITHUB_API}/user/emails`, { headers });
        const verified = emails.ok ? githubVerifiedEmail(await emails.json()) : null;
        const profileEmail = typeof user.email === 'string' ? user.email : undefined;
        return { ...user, email: verified ?? profileEmail, email_verified: verified !== null };
      },
    },
    profile: (claims) => ssoUser(claims, claims.id),
  };
}

/** The next-auth providers for the configured SSO, their callbacks at `${authBase}/callback/<id>`. */
export function ssoProviders(configs: readonly SsoProviderConfig[], authBase: string): OAuthConfig<Claims>[] {
  return configs.map((c) => (c.kind === 'github' ? githubProvider(c, `${authBase}/callback/${c.id}`) : oidcProvider(c, `${authBase}/callback/${c.id}`)));
}

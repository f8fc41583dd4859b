// A local OpenID Connect provider for tests (the npm `oidc-provider` package, in-process on a port of
// its own): one confidential client for the gateway's callback URL, and accounts whose claims the test
// sets. Its login step signs in the account the test chose (`idp.signInAs`) without a form, and every
// grant is given without a consent screen, so a browser goes gateway → IdP → gateway in redirects.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

export interface IdpClaims {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface LocalIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Sets (or replaces) an account's claims; `sub` is the account's subject. */
  setAccount(sub: string, claims: IdpClaims): void;
  /** The account the next login step signs in. */
  signInAs(sub: string): void;
  close(): Promise<void>;
}

export async function startLocalIdp(opts: { port: number; redirectUris: string[] }): Promise<LocalIdp> {
  const issuer = `http://127.0.0.1:${opts.port}`;
  const clientId = 'gateway-test';
  const clientSecret = 'idp-client-secret-for-tests-only';
  const accounts = new Map<string, IdpClaims>();
  let current: string | null = null;

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: opts.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['local-idp-cookie-key-for-tests'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      if (!accounts.has(sub)) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...accounts.get(sub) }) };
    },
    // Every client is trusted: no consent screen, the scopes asked for are granted.
    async loadExistingGrant(ctx) {
      const accountId = ctx.oidc.session!.accountId!;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    // Short-lived, and nothing remembered between the test's browser contexts but what they carry.
    ttl: { Session: 600, Interaction: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
  };
  const provider = new Provider(issuer, configuration);
  // Errors the test provokes (a reused code) are expected; keep them out of the test output.
  provider.on('server_error', () => {});

  const oidc = provider.callback();
  const server = http.createServer((req, res) => {
    const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!match) return void oidc(req, res);
    void (async () => {
      try {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name !== 'login' || !current) throw new Error(`unexpected prompt ${details.prompt.name}`);
        await provider.interactionFinished(req, res, { login: { accountId: current } }, { mergeWithLastSubmission: false });
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(opts.port, '127.0.0.1', resolve));
  if ((server.address() as AddressInfo).port !== opts.port) throw new Error('the IdP is not on its port');

  return {
    issuer,
    clientId,
    clientSecret,
    setAccount: (sub, claims) => void accounts.set(sub, claims),
    signInAs: (sub) => {
      current = sub;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

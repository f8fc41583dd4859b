// Which single sign-on providers the operator configured (docs/decisions/052), read from the
// environment's variables. Pure and import-free: lib/env.ts calls ssoConfigProblems at start-up (a
// half-configured provider stops the server with a message naming the variable), and the pages and
// next-auth read ssoProviderConfigs.

export type SsoProviderId = 'oidc' | 'google' | 'github';

export interface SsoEnv {
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  OIDC_CLIENT_SECRET?: string;
  OIDC_NAME?: string;
  GITHUB_CLIENT_ID?: string;
  GITHUB_CLIENT_SECRET?: string;
  GOOGLE_CLIENT_ID?: string;
  GOOGLE_CLIENT_SECRET?: string;
}

export interface SsoProviderConfig {
  id: SsoProviderId;
  /** The button's label: "Continue with <name>". */
  name: string;
  /** OpenID Connect (id token verified against the issuer's keys) or GitHub's OAuth 2 (no id token). */
  kind: 'oidc' | 'github';
  /** OpenID Connect only: the issuer, without a trailing slash (discovery is under it). */
  issuer?: string;
  clientId: string;
  clientSecret: string;
}

export interface SsoConfigProblem {
  variable: keyof SsoEnv;
  message: string;
}

export const DEFAULT_OIDC_NAME = 'SSO';
const DISCOVERY_PATH = '/.well-known/openid-configuration';
export const GOOGLE_ISSUER = 'https://accounts.google.com';

const present = (v: string | undefined): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * The issuer of OIDC_ISSUER, which may also be given as its discovery URL; null when it is no URL,
 * carries a query or credentials, or is plain http anywhere but this machine (the client secret and
 * the tokens would cross the network readable).
 */
export function oidcIssuer(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.search || url.hash || url.username || url.password) return null;
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return null;
  let path = url.pathname;
  if (path.endsWith(DISCOVERY_PATH)) path = path.slice(0, -DISCOVERY_PATH.length);
  return `${url.origin}${path.replace(/\/+$/, '')}`;
}

/** Where an issuer's discovery document is (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer}${DISCOVERY_PATH}`;
}

function pairProblems(e: SsoEnv, id: keyof SsoEnv, secret: keyof SsoEnv): SsoConfigProblem[] {
  if (present(e[id]) === present(e[secret])) return [];
  const missing = present(e[id]) ? secret : id;
  return [{ variable: missing, message: `${id} and ${secret} are set together: ${missing} is missing` }];
}

/** What is wrong with the SSO variables (empty when nothing, or whole sets, are configured). */
export function ssoConfigProblems(e: SsoEnv): SsoConfigProblem[] {
  const problems: SsoConfigProblem[] = [];
  const oidcVars = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;
  const setVars = oidcVars.filter((v) => present(e[v]));
  if (setVars.length > 0 && setVars.length < oidcVars.length) {
    for (const v of oidcVars.filter((name) => !present(e[name])))
      problems.push({ variable: v, message: `OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together: ${v} is missing` });
  }
  if (present(e.OIDC_NAME) && setVars.length === 0)
    problems.push({ variable: 'OIDC_NAME', message: 'OIDC_NAME names the OIDC provider: set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too' });
  if (present(e.OIDC_ISSUER) && oidcIssuer(e.OIDC_ISSUER) === null)
    problems.push({
      variable: 'OIDC_ISSUER',
      message: 'OIDC_ISSUER must be the issuer URL (or its /.well-known/openid-configuration URL): https, or http only on localhost, without query',
    });
  problems.push(...pairProblems(e, 'GITHUB_CLIENT_ID', 'GITHUB_CLIENT_SECRET'));
  problems.push(...pairProblems(e, 'GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'));
  return problems;
}

/** The configured providers, in the order their buttons show: the organization's own IdP first. */
export function ssoProviderConfigs(e: SsoEnv): SsoProviderConfig[] {
  const providers: SsoProviderConfig[] = [];
  const issuer = present(e.OIDC_ISSUER) ? oidcIssuer(e.OIDC_ISSUER) : null;
  if (issuer && present(e.OIDC_CLIENT_ID) && present(e.OIDC_CLIENT_SECRET)) {
    providers.push({
      id: 'oidc',
      name: present(e.OIDC_NAME) ? e.OIDC_NAME.trim() : DEFAULT_OIDC_NAME,
      kind: 'oidc',
      issuer,
      clientId: e.OIDC_CLIENT_ID.trim(),
      clientSecret: e.OIDC_CLIENT_SECRET,
    });
  }
  if (present(e.GOOGLE_CLIENT_ID) && present(e.GOOGLE_CLIENT_SECRET)) {
    providers.push({
      id: 'google',
      name: 'Google',
      kind: 'oidc',
      issuer: GOOGLE_ISSUER,
      clientId: e.GOOGLE_CLIENT_ID.trim(),
      clientSecret: e.GOOGLE_CLIENT_SECRET,
    });
  }
  if (present(e.GITHUB_CLIENT_ID) && present(e.GITHUB_CLIENT_SECRET)) {
    providers.push({ id: 'github', name: 'GitHub', kind: 'github', clientId: e.GITHUB_CLIENT_ID.trim(), clientSecret: e.GITHUB_CLIENT_SECRET });
  }
  return providers;
}

/** Whether an email is verified by the provider's own claim (OIDC `email_verified`: only a real true counts). */
export function oidcEmailVerified(claims: Record<string, unknown>): boolean {
  // Some providers send the string "true"; anything else (absent, false, "false") is not verified.
  return claims.email_verified === true || claims.email_verified === 'true';
}

/** GitHub's verified primary address from GET /user/emails; null when the primary one is unverified. */
export function githubVerifiedEmail(emails: unknown): string | null {
  if (!Array.isArray(emails)) return null;
  const primary = emails.find(
    (e): e is { email: string; primary: true; verified: boolean } => !!e && typeof e === 'object' && (e as { primary?: unknown }).primary === true,
  );
  return primary && primary.verified === true && typeof primary.email === 'string' ? primary.email : null;
}

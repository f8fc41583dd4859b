import type { NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { authSecret } from '@/lib/secrets';
import { signInWithPassword } from '@/lib/auth/login';
import { SESSION_MAX_AGE_S, sessionCookieSettings } from '@/lib/auth/session-cookie';
import { GatewayError } from '@/lib/errors';
import { clientIpFrom } from '@/lib/client-ip';
import { enforceLimit } from '@/lib/limits/enforce';
import { getConfig } from '@/lib/config';
import { AUTH_TIME_CLAIM } from '@/lib/auth/session-epoch';
import { env } from '@/lib/env';
import { ssoProviderConfigs } from '@/lib/auth/sso-config';
import { ssoProviders, type SsoUser } from '@/lib/auth/sso-providers';
import { linkedUser, resolveSsoSignIn, SSO_ERROR_PARAM } from '@/lib/auth/sso';

const credentialsProvider = CredentialsProvider({
  name: 'Email and password',
  credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
  async authorize(credentials, req) {
    // The browser sign-in shares the per-IP login budget of POST /api/auth/login.
    const ip = clientIpFrom(undefined, req?.headers?.['x-forwarded-for']);
    const limit = getConfig().limits.login_per_ip_per_minute;
    await enforceLimit(`gw:ip:login:${ip}`, limit, `login: ${limit} per IP per minute`).catch((err: unknown) => {
      throw signInError(err);
    });
    if (!credentials?.email || !credentials.password) return null;
    try {
      const user = await signInWithPassword(credentials.email, credentials.password, ip);
      return { id: user.id, email: user.email };
    } catch (err) {
      // A wrong password is next-auth's CredentialsSignin; throttling, suspension and SSO-only domains are said as such.
      if (err instanceof GatewayError && (err.code === 'unauthenticated' || err.code === 'invalid_request')) return null;
      throw signInError(err);
    }
  },
});

/** The SSO providers the operator configured (environment; lib/auth/sso-config.ts): id and button label. */
export function configuredSsoProviders(): { id: string; name: string }[] {
  return ssoProviderConfigs(env).map((c) => ({ id: c.id, name: c.name }));
}

/**
 * The options for one request to /api/auth: the SSO providers' callback URL on `authBase` (the
 * request's own `<origin>/api/auth` unless NEXTAUTH_URL is set; see lib/auth/sso-providers.ts).
 */
export function authOptionsFor(authBase: string): NextAuthOptions {
  return { ...authOptions, providers: [credentialsProvider, ...ssoProviders(ssoProviderConfigs(env), authBase)] };
}

export const authOptions: NextAuthOptions = {
  secret: authSecret(),
  // Credentials sign-in only works with JWT sessions in next-auth 4.
  session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE_S },
  // The cookie name and attributes POST /api/auth/login and /register use too (see sessionCookieSettings).
  useSecureCookies: sessionCookieSettings().options.secure,
  cookies: { sessionToken: sessionCookieSettings() },
  pages: { signIn: '/login' },
  providers: [credentialsProvider],
  callbacks: {
    // Same site only, and never tied to the configured origin: a callback URL keeps its path on the
    // base URL (the request's own origin is put back by app/api/auth/[...nextauth]/route.ts).
    redirect({ url, baseUrl }) {
      try {
        const target = new URL(url, baseUrl);
        return `${baseUrl}${target.pathname}${target.search}${target.hash}`;
      } catch {
        return baseUrl;
      }
    },
    /**
     * An SSO sign-in reaches an account only by its linked identity or a verified email
     * (lib/auth/sso.ts); a refusal goes back to the login page, which says why.
     */
    async signIn({ user, account }) {
      if (account?.type !== 'oauth') return true;
      const resolved = await resolveSsoSignIn({
        provider: account.provider,
        subject: account.providerAccountId,
        email: user.email ?? null,
        emailVerified: (user as SsoUser).emailVerified === true,
      });
      return resolved.ok ? true : `/login?error=${SSO_ERROR_PARAM[resolved.reason]}`;
    },
    async jwt({ token, user, account }) {
      if (user) {
        if (account?.type === 'oauth') {
          // The session is the gateway account's, exactly as a password sign-in makes it (sub, email,
          // authTime): not the provider's subject, name or picture.
          const linked = await linkedUser(account.provider, account.providerAccountId);
          if (!linked) throw new Error('The identity was not linked to an account');
          token.sub = linked.id;
          token.email = linked.email;
          delete token.name;
          delete token.picture;
        } else token.sub = user.id;
        token[AUTH_TIME_CLAIM] = Date.now();
      }
      return token;
    },
    session({ session, token }) {
      if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
      (session as { authTime?: unknown }).authTime = token[AUTH_TIME_CLAIM];
      return session;
    },
  },
};

/**
 * next-auth hands the browser only an Error's message (`error` of signIn's answer): a coded one is
 * sent as `{message, message_code, params}` JSON so the sign-in form can say it in the reader's language.
 */
function signInError(err: unknown): unknown {
  if (!(err instanceof GatewayError) || !err.messageCode) return err;
  return new Error(JSON.stringify({ message: err.message, message_code: err.messageCode, params: err.params ?? {} }));
}

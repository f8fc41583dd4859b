import type { NextAuthOptions } from 'next-auth';
import CredentialsProvider from 'next-auth/providers/credentials';
import { authSecret } from '@/lib/secrets';
import { verifyCredentials } from '@/lib/auth/login';
import { enforceLimit } from '@/lib/http/api';
import { getConfig } from '@/lib/config';

export const authOptions: NextAuthOptions = {
  secret: authSecret(),
  // Credentials sign-in only works with JWT sessions in next-auth 4.
  session: { strategy: 'jwt', maxAge: 7 * 24 * 3600 },
  pages: { signIn: '/login' },
  providers: [
    CredentialsProvider({
      name: 'Email and password',
      credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
      async authorize(credentials, req) {
        // The browser sign-in shares the per-IP login budget of POST /api/auth/login.
        const forwarded = req?.headers?.['x-forwarded-for'];
        const ip = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() || 'unknown';
        const limit = getConfig().limits.login_per_ip_per_minute;
        await enforceLimit(`gw:ip:login:${ip}`, limit, `login: ${limit} per IP per minute`);
        if (!credentials?.email || !credentials.password) return null;
        const user = await verifyCredentials(credentials.email, credentials.password);
        return user ? { id: user.id, email: user.email } : null;
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user) token.sub = user.id;
      return token;
    },
    session({ session, token }) {
      if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
      return session;
    },
  },
};

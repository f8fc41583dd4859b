/** @type {import('next').NextConfig} */
const securityHeaders = [
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
  { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
  {
    key: 'Content-Security-Policy',
    value:
      "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self' https://checkout.stripe.com",
  },
];

const nextConfig = {
  poweredByHeader: false,
  // forbidden()/unauthorized() give the operator console's pages real 403/401 answers.
  experimental: { authInterrupts: true },
  // Native/wasm and connection-pooling packages stay outside the bundle.
  serverExternalPackages: [
    '@electric-sql/pglite',
    'pglite-prisma-adapter',
    '@prisma/adapter-pg',
    'pg',
    'ioredis',
    'undici',
    'js-tiktoken',
    'bcryptjs',
    'stripe',
  ],
  async headers() {
    return [{ source: '/:path*', headers: securityHeaders }];
  },
};

export default nextConfig;

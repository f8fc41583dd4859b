import { isIP } from 'node:net';
import { z } from 'zod';
import { normaliseEmail } from '@/lib/auth/password-rules';
import { ssoConfigProblems } from '@/lib/auth/sso-config';

/** Whose X-Forwarded-For entries to believe: null, none. */
export type TrustProxy = { hops: number } | { ranges: string[] } | null;

/** "192.0.2.7", "10.0.0.0/8", "2001:db8::/32" (the prefix within the family's bits). */
function isCidr(text: string): boolean {
  const [address, prefix, extra] = text.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** TRUST_PROXY's value (exported for its tests). */
export const trustProxySchema = z
  .string()
  .default('0')
  .transform((v, ctx): TrustProxy => {
    const text = v.trim().toLowerCase();
    if (text === '0' || text === 'false') return null;
    if (text === 'true') return { hops: 1 };
    if (/^\d+$/.test(text)) {
      const hops = Number(text);
      if (hops === 0) return null;
      if (hops <= 16) return { hops };
    } else {
      const ranges = text
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      if (ranges.length > 0 && ranges.every(isCidr)) return { ranges };
    }
    ctx.addIssue({
      code: 'custom',
      message: 'TRUST_PROXY must be 0, a number of trusted proxies (1-16), or a comma-separated list of trusted proxy addresses or CIDR ranges',
    });
    return z.NEVER;
  });

// The only reader of process.env. Everything else imports `env`.
const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  /**
   * Pending-connection queue of the listening socket (the kernel caps it at net.core.somaxconn).
   * Node's default, 511, overflows when a burst of a thousand clients connects while the loop is
   * busy: the kernel drops their SYNs and each waits for a retransmit, 1 s and then 3 s.
   */
  LISTEN_BACKLOG: z.coerce.number().int().min(1).max(65535).default(4096),
  /** PostgreSQL URL; without it the app uses embedded PGlite under DATA_DIR. */
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  /** Redis URL; without it limits live in-process (correct on a single instance only). */
  REDIS_URL: z.string().url().optional(),
  /**
   * Redis Cluster seed nodes, `host:port,host:port,...`, instead of REDIS_URL: every Redis use of
   * the gateway (limits, balances, deny markers, invalidation) then runs on the cluster.
   */
  REDIS_CLUSTER_NODES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(/^[^\s:]+:\d{1,5}$/, 'REDIS_CLUSTER_NODES must be a comma-separated list of host:port')
          .transform((n) => ({ host: n.slice(0, n.lastIndexOf(':')), port: Number(n.slice(n.lastIndexOf(':') + 1)) })),
      ),
    ),
  GATEWAY_CONFIG: z.string().default('config/gateway.example.yaml'),
  /** Signs session JWTs. Generated and kept under DATA_DIR when absent. */
  NEXTAUTH_SECRET: z.string().min(16).optional(),
  NEXTAUTH_URL: z.string().url().optional(),
  /**
   * Single sign-on (docs/decisions/052; lib/auth/sso-config.ts checks they come in whole sets): a
   * generic OpenID Connect provider from its issuer (discovery at /.well-known/openid-configuration),
   * and the GitHub and Google presets. A provider is offered when its id and secret are set.
   */
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  /** The OIDC button's label ("Continue with <name>"); default "SSO". */
  OIDC_NAME: z.string().max(60).optional(),
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  /** 32-byte key (hex or base64) that encrypts upstream secrets at rest. Generated under DATA_DIR when absent. */
  SECRETS_KEY: z.string().min(32).optional(),
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /**
   * Another Stripe API base (`http://127.0.0.1:12111` for stripe-mock or a test double); unset = api.stripe.com.
   * Only an origin: the client speaks to its host, port and protocol.
   */
  STRIPE_API_BASE: z
    .string()
    .url()
    .transform((v) => new URL(v))
    .refine((u) => (u.protocol === 'http:' || u.protocol === 'https:') && (u.pathname === '/' || u.pathname === '') && !u.search && !u.username, {
      message: 'STRIPE_API_BASE must be an http(s) origin such as http://127.0.0.1:12111 (no path, query or credentials)',
    })
    .optional(),
  /** Bearer token for GET /metrics; without it /metrics answers 404. */
  METRICS_TOKEN: z.string().min(8).optional(),
  /** Lets `GET /metrics?gc=1` force a full GC first (needs node --expose-gc): leak tests only. */
  METRICS_ALLOW_GC: z
    .enum(['0', '1', 'true', 'false'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Who users write to for credit when card payments are not set up: an email address or a URL (shown on the billing page). */
  SUPPORT_CONTACT: z.string().max(200).optional(),
  /**
   * Outgoing mail (invitations, password reset, email verification): `smtp://user:pass@host:587`
   * (STARTTLS when offered) or `smtps://user:pass@host:465`. Unset: no mail is sent.
   */
  SMTP_URL: z
    .string()
    .url()
    .refine((v) => /^smtps?:\/\//i.test(v), { message: 'SMTP_URL must be smtp://… or smtps://…' })
    .optional(),
  /** The From of that mail: `Gateway <no-reply@example.com>` or an address. */
  MAIL_FROM: z.string().min(3).max(200).optional(),
  /** Public base URL shown in the dashboard snippets and used for Stripe return URLs. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Seconds a cached API key / account may be stale (revocation is pushed at once via Redis). */
  AUTH_CACHE_TTL_S: z.coerce.number().int().min(1).max(3600).default(30),
  /**
   * Longest a request-log row waits for its batch (a full batch of 1,000 goes at once). 1 s rather
   * than 200 ms: partial batches of a few hundred rows cost PostgreSQL nearly twice the CPU per row
   * of full ones (docs/decisions/009-batched-request-log.md).
   */
  LOG_FLUSH_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /**
   * Most request-log rows queued for the database (reached only while it cannot be written): at the
   * bound new /v1 requests get 503 rather than being served unbilled.
   */
  LOG_QUEUE_MAX: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  /**
   * Longest a client may take to send a request's headers and body; a slower one is answered 408
   * and its connection closed (bodies trickled a byte a second would otherwise hold sockets forever).
   * Responses (long streams) are not bounded by it.
   */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /**
   * Which X-Forwarded-For entries to believe (lib/client-ip.ts): `0` none (the connection's
   * address); a number n of trusted proxies in front, each appending the address it saw (`1`, or
   * `true`: one proxy, the entry it appended, the last); or a comma-separated list of trusted proxy
   * addresses and CIDR ranges (the first address from the right that is not one of them).
   */
  TRUST_PROXY: trustProxySchema,
  /**
   * Where the embedded database (PGlite, no DATABASE_URL) runs: `thread` (default), a worker thread
   * of its own so its synchronous WebAssembly work never holds the request loop; `inline`, in the
   * request thread (the behaviour before; kept for comparison in the benchmark).
   */
  PGLITE_MODE: z.enum(['thread', 'inline']).default('thread'),
  /**
   * PostgreSQL's shared_buffers inside the embedded database. PGlite's default (128MB) lives in
   * its WebAssembly memory and costs ~115 MB RSS more than 16MB for no measurable write speed at
   * the gateway's load (the request log is appended, not re-read on the request path).
   */
  PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^\d+(kB|MB|GB)$/, 'PGLITE_SHARED_BUFFERS must look like 16MB')
    .default('16MB'),
  /**
   * `1`: server.ts serves only /v1, /healthz, /readyz and /metrics and never loads the Next.js app
   * (dashboard, /api): the lean footprint for a process that only proxies. Run the dashboard in
   * another process (`npm run start:next`) against the same DATABASE_URL and REDIS_URL.
   */
  GATEWAY_ONLY: z
    .enum(['0', '1', 'true', 'false'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /**
   * Load the tokenizer (o200k ranks: ~70 MB of heap, ~130 MB RSS) at start, so the first reply
   * without upstream usage does not wait ~1 s for it: `auto` (default) does with the full app and
   * leaves it to first use with GATEWAY_ONLY=1, whose point is the footprint; `1` or `0` force it.
   */
  TOKENIZER_PRELOAD: z.enum(['auto', '0', '1']).default('auto'),
  /**
   * Compile WebAssembly (Prisma's query compiler; PGlite) with V8's baseline compiler only
   * (--liftoff-only): the optimising tier's compilations keep ~100 MB of native memory. `auto`
   * (default): on with GATEWAY_ONLY=1, off with the full app; `1` or `0` force it.
   */
  WASM_BASELINE: z.enum(['auto', '0', '1']).default('auto'),
  /** Grace period for in-flight requests on SIGTERM. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /**
   * Call the upstream while the admission is still on its way when the account has ample room
   * (see lib/gateway/admission/speculation.ts): `auto` (default) for streams, and for every request while the
   * instance is quiet; `streams` for streaming requests only; `all`; or `off`.
   */
  SPECULATIVE_ADMISSION: z
    .enum(['auto', 'streams', 'all', 'off', '0', '1'])
    .default('auto')
    .transform((v) => (v === '1' ? 'all' : v === '0' ? 'off' : v)),
  /**
   * Concurrency lease lifetime in ms, set by the variable GATEWAY_LEASE_TTL_MS: live requests renew
   * their leases; a crashed instance's leases are freed after this long.
   */
  LEASE_TTL_MS: z.coerce.number().int().min(1000).max(600000).default(120000),
  /**
   * How often each server applies credits still pending for the live balance (made while Redis was
   * unreachable from their process; lib/billing/ledger.ts): one query on a partial index.
   */
  CREDIT_RECONCILE_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  /** Days after today whose request-log partitions are created ahead (lib/db/partitions.ts). */
  REQUEST_LOG_PARTITIONS_AHEAD: z.coerce.number().int().min(1).max(90).default(7),
  /**
   * Request-log days kept before today; older day partitions are dropped whole (0: keep forever).
   * The daily rollups (usage, key spend), balances and the ledger stay. At least 35, so every
   * month-to-date reading of raw rows (tier promotion, the billing page) stays whole.
   */
  REQUEST_LOG_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .refine((v) => v === 0 || v >= 35, 'REQUEST_LOG_RETENTION_DAYS must be 0 (keep forever) or at least 35')
    .default(0),
  /** How often each server checks the request-log partitions (creation ahead, retention). */
  REQUEST_LOG_MAINTENANCE_MS: z.coerce.number().int().min(1000).max(86_400_000).default(3_600_000),
  /** How often each server evaluates budget alerts and delivers due webhooks (lib/alerts). */
  ALERT_EVAL_MS: z.coerce.number().int().min(50).max(600_000).default(10_000),
  /** First retry delay of a failed alert webhook; each later one is 4 times longer (capped at 6 h). */
  ALERT_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  /** Jobs (video generations, batches: lib/jobs) one instance runs at once; 0: this instance runs none. */
  JOBS_WORKERS: z.coerce.number().int().min(0).max(256).default(8),
  /** How often an instance looks for jobs to claim. */
  JOBS_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(1000),
  /** How often an instance beats for the jobs it runs (and sees their cancellation). */
  JOBS_HEARTBEAT_MS: z.coerce.number().int().min(20).max(60_000).default(5000),
  /** A running job whose heartbeat is older than this is taken over by another instance. */
  JOBS_STALE_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** First retry delay of a failed job attempt; each later one 4 times longer (capped at a minute). */
  JOBS_RETRY_BASE_MS: z.coerce.number().int().min(10).max(600_000).default(5000),
  /** How often each instance removes what outlived its retention (videos, batch files). */
  JOBS_SWEEP_MS: z.coerce.number().int().min(100).max(86_400_000).default(600_000),
  /** How often a video job polls its upstream. */
  VIDEO_POLL_MS: z.coerce.number().int().min(20).max(600_000).default(5000),
  /** Deliveries tried per alert event before it is given up (8 at the defaults span about a day). */
  ALERT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  /** Longest one webhook delivery may take (connect to the end of the response). */
  ALERT_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * Allow alert webhooks to private, loopback and link-local addresses (tests, webhooks inside one
   * network). Off by default: a user-set URL must not reach the operator's internal services.
   */
  ALERT_WEBHOOK_ALLOW_PRIVATE: z
    .enum(['0', '1', 'true', 'false'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /**
   * Comma-separated emails that `npm run admin -- create-user` makes operators (role admin): how a
   * fresh install gets its first admin. Never applied to a self-registered account (anyone could
   * register a listed address first); an existing account is promoted with `set-role`.
   */
  ADMIN_EMAILS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((e) => normaliseEmail(e))
        .filter(Boolean),
    )
    .pipe(z.array(z.string().email('ADMIN_EMAILS must be a comma-separated list of email addresses'))),
});

export type Env = z.infer<typeof schema>;

function load(): Env {
  // An empty variable means unset (DATABASE_URL= selects the embedded database).
  const set = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse({ ...set, LEASE_TTL_MS: set.GATEWAY_LEASE_TTL_MS });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  // A half-configured SSO provider is a start-up error, not a button that fails when pressed.
  const sso = ssoConfigProblems(parsed.data);
  if (sso.length > 0) throw new Error(`Invalid environment:\n${sso.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
  return parsed.data;
}

export const env: Env = load();

// next-auth reads NEXTAUTH_URL itself and takes an empty one for a URL (every auth call then fails
// with "Invalid URL"); empty means unset here, so it does for next-auth too.
if (process.env.NEXTAUTH_URL === '') delete process.env.NEXTAUTH_URL;

/** Secrets the operator config refers to by variable name (`api_key_env`). */
export function envSecret(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

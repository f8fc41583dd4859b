// npm run admin -- <command> [options]: operator tasks on accounts and keys. Prints JSON.
import { parseArgs } from 'node:util';
import { createKey, createUser, findUserByEmail, parseTier } from '@/lib/accounts/queries';
import { setPasswordByOperator } from '@/lib/accounts/settings';
import { adminAdjustBalance, adminRevokeKey, adminSetLimits, adminSetStatus, adminSetTier } from '@/lib/admin/accounts';
import { CLI_ACTOR, writeAudit } from '@/lib/admin/audit';
import { parseRole, roleForNewAccount, setRole } from '@/lib/admin/roles';
import { createCodeBatch } from '@/lib/admin/redemption';
import { endPlan, grantPlan } from '@/lib/plans/subscriptions';
import { usdToPico } from '@/lib/billing/money';
import { EmbeddedDatabaseBusyError, getDb } from '@/lib/db';
import { runMigrations } from '@/lib/db/migrate';
import { GatewayError } from '@/lib/errors';
import { redisConfigured } from '@/lib/redis-client';
import { closeEvents } from '@/lib/events';
import { writeFileSync } from 'node:fs';
import { openSource } from '@/lib/import/source';
import { runImport } from '@/lib/import/importer';

const usage = `Usage: npm run admin -- <command> [options]
  create-user --email E --password P [--tier T] [--balance-usd N]   -> {"userId","apiKey","role"}
              (role admin when ADMIN_EMAILS lists E: how the first operator is made;
               registering a listed email on the web never makes an operator)
  set-tier    --user ID|--email E --tier free|pro|vip|enterprise
  set-limits  --user ID|--email E [--rpm N] [--rph N] [--tokens-per-day N] [--concurrency N]
  suspend     --user ID|--email E
  unsuspend   --user ID|--email E
  credit      --user ID|--email E --usd N [--note TEXT]
  create-key  --user ID|--email E [--name NAME]                      -> {"keyId","apiKey"}
  revoke-key  --user ID|--email E --key KEY_ID
  set-role    --user ID|--email E --role user|admin   (promotes or demotes an existing account)
  set-password --user ID|--email E --password P   (sign-up rules; signs out every session; for users
               who cannot reset it by mail)
  create-codes --usd N --count K [--expires ISO-8601] [--plan ID --days D]   -> ["code", ...]
               (with --plan a code grants that plan for D days; --usd may then be 0)
  grant-plan  --user ID|--email E --plan ID --days D   (the same plan, still live, is extended)
  end-plan    --user ID|--email E                      (ends the account's plan now)
  import      --from new-api|one-api --database-url URL [--dry-run] [--quota-per-usd N] [--channels-out FILE]
              users, tokens, balances and redemption codes into this database; channels to a
              YAML file for the operator config (default imported-channels-<from>.yaml). URL: a
              SQLite file, postgres://… or mysql://…; quota converted at N units per USD (500000).
              Running it again skips what it imported before. Prints the report.
  help [command], <command> --help, -h   this text, or that command's lines
Every command that changes something is written to the audit log (actor "cli").`;

const COMMANDS = [
  'create-user',
  'set-tier',
  'set-limits',
  'suspend',
  'unsuspend',
  'credit',
  'create-key',
  'revoke-key',
  'set-role',
  'set-password',
  'create-codes',
  'grant-plan',
  'end-plan',
  'import',
];

/** Usage on stderr and the exit code for a command line this script cannot run (before any database work). */
function refuse(message: string | undefined): never {
  console.error(message ? `error: ${message}\n${usage}` : usage);
  process.exit(2);
}

const options = {
  help: { type: 'boolean', short: 'h' },
  email: { type: 'string' },
  password: { type: 'string' },
  tier: { type: 'string' },
  'balance-usd': { type: 'string' },
  user: { type: 'string' },
  usd: { type: 'string' },
  note: { type: 'string' },
  name: { type: 'string' },
  key: { type: 'string' },
  rpm: { type: 'string' },
  rph: { type: 'string' },
  'tokens-per-day': { type: 'string' },
  concurrency: { type: 'string' },
  role: { type: 'string' },
  count: { type: 'string' },
  expires: { type: 'string' },
  plan: { type: 'string' },
  days: { type: 'string' },
  from: { type: 'string' },
  'database-url': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'quota-per-usd': { type: 'string' },
  'channels-out': { type: 'string' },
} as const;

const argv = process.argv.slice(2);
// Asking for help always gets it, whatever else is on the line (`create-codes --usd --help` too).
if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
  console.log(helpFor(argv.find((a, i) => !a.startsWith('-') && !(i === 0 && a === 'help') && COMMANDS.includes(a))));
  process.exit(0);
}

let parsed: ReturnType<typeof parseArgs<{ allowPositionals: true; options: typeof options }>>;
try {
  parsed = parseArgs({ allowPositionals: true, options });
} catch (err) {
  // An unknown or malformed option: say which, with the usage, not a stack trace.
  refuse((err as Error).message);
}
const { positionals, values } = parsed;
if (positionals[0] === undefined) refuse(undefined);
if (!COMMANDS.includes(positionals[0])) refuse(`unknown command ${positionals[0]}`);

/** `<command> --help`: that command's lines of the usage (with their continuation lines), or all of it. */
function helpFor(command: string | undefined): string {
  const lines = usage.split('\n');
  const at = lines.findIndex((l) => command !== undefined && l.trimStart().startsWith(`${command} `));
  if (at < 0) return usage;
  let end = at + 1;
  while (end < lines.length && /^ {6,}/.test(lines[end]!)) end++;
  return ['Usage: npm run admin -- <command> [options]', ...lines.slice(at, end)].join('\n');
}

function need(name: Exclude<keyof typeof values, 'help'>): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new GatewayError('invalid_request', `--${name} is required`);
  return v;
}

function amount(text: string, flag: string): bigint {
  if (!/^\d+(\.\d{1,12})?$/.test(text)) throw new GatewayError('invalid_request', `--${flag} must be a non-negative decimal amount in USD`);
  return usdToPico(text);
}

function optionalInt(flag: 'rpm' | 'rph' | 'tokens-per-day' | 'concurrency'): number | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new GatewayError('invalid_request', `--${flag} must be a positive integer`);
  return Number(v);
}

function planDays(): number {
  const days = need('days');
  if (!/^\d{1,4}$/.test(days)) throw new GatewayError('invalid_request', '--days must be a whole number of days');
  return Number(days);
}

async function userId(): Promise<string> {
  if (values.user) return values.user;
  const user = await findUserByEmail(need('email'));
  if (!user) throw new GatewayError('not_found', `no account with email ${values.email}`);
  return user.id;
}

async function run(command: string | undefined): Promise<unknown> {
  switch (command) {
    case 'create-user': {
      const user = await createUser({
        email: need('email'),
        password: need('password'),
        tier: values.tier ? parseTier(values.tier) : 'free',
        balancePico: values['balance-usd'] ? amount(values['balance-usd'], 'balance-usd') : undefined,
      });
      const key = await createKey(user.id, values.name ?? 'default');
      await writeAudit(CLI_ACTOR, {
        action: 'account.create',
        targetType: 'account',
        targetId: user.id,
        after: { email: user.email, tier: user.tier, keyId: key.id },
      });
      const role = roleForNewAccount(user.email);
      if (role === 'admin') await setRole(CLI_ACTOR, user.id, role);
      return { userId: user.id, apiKey: key.key, role };
    }
    case 'set-password': {
      const id = await userId();
      await setPasswordByOperator(id, need('password'));
      await writeAudit(CLI_ACTOR, { action: 'account.set_password', targetType: 'account', targetId: id });
      return { userId: id, sessionsEnded: true };
    }
    case 'set-tier': {
      const user = await adminSetTier(CLI_ACTOR, await userId(), parseTier(need('tier')));
      return { userId: user.id, tier: user.tier };
    }
    case 'set-limits': {
      const limits = { rpm: optionalInt('rpm'), rph: optionalInt('rph'), tokensPerDay: optionalInt('tokens-per-day'), concurrency: optionalInt('concurrency') };
      const user = await adminSetLimits(CLI_ACTOR, await userId(), limits);
      return { userId: user.id, limits: user.limits };
    }
    case 'suspend':
    case 'unsuspend': {
      const user = await adminSetStatus(CLI_ACTOR, await userId(), command === 'suspend' ? 'suspended' : 'active');
      return { userId: user.id, status: user.status };
    }
    case 'credit': {
      const id = await userId();
      const credit = await adminAdjustBalance(CLI_ACTOR, id, amount(need('usd'), 'usd'), values.note ?? 'admin credit');
      if (!credit.live) {
        // Recorded, not yet spendable: say so, and by when (lib/billing/ledger.ts, the credit outbox).
        console.error(
          redisConfigured()
            ? 'note: Redis is unreachable from here; the credit is recorded, and every running server applies it to the live balance within a second or two of reaching Redis (check its logs: "pending credits applied").'
            : "note: without Redis the live balance is the running server's; it applies this credit within a second or two (a server started later reads it from the database).",
        );
      }
      return {
        userId: id,
        balanceUsd: (await (await getDb()).user.findUniqueOrThrow({ where: { id } })).balanceUsd.toFixed(12),
        balancePico: credit.balance.toString(),
        live: credit.live ? 'applied' : 'pending',
      };
    }
    case 'create-key': {
      const id = await userId();
      const key = await createKey(id, values.name ?? 'default');
      await writeAudit(CLI_ACTOR, { action: 'key.create', targetType: 'key', targetId: key.id, after: { userId: id, display: key.display } });
      return { keyId: key.id, apiKey: key.key };
    }
    case 'revoke-key': {
      const key = await adminRevokeKey(CLI_ACTOR, await userId(), need('key'));
      return { keyId: key.id, revoked: key.revoked };
    }
    case 'set-role': {
      const user = await setRole(CLI_ACTOR, await userId(), parseRole(need('role')));
      return { userId: user.id, email: user.email, role: user.role };
    }
    case 'create-codes': {
      const count = need('count');
      if (!/^\d+$/.test(count)) throw new GatewayError('invalid_request', '--count must be a positive integer');
      const batch = await createCodeBatch(CLI_ACTOR, {
        amountPico: values.plan && values.usd === undefined ? 0n : amount(need('usd'), 'usd'),
        count: Number(count),
        expiresAt: values.expires,
        planId: values.plan,
        planDays: values.plan ? planDays() : undefined,
      });
      return batch.codes.map((c) => c.code);
    }
    case 'grant-plan': {
      const sub = await grantPlan(await userId(), need('plan'), planDays(), 'operator', { actor: CLI_ACTOR });
      return { plan: sub.planId, until: sub.currentPeriodEnd.toISOString() };
    }
    case 'end-plan': {
      const sub = await endPlan(await userId(), 'now', CLI_ACTOR);
      return { ended: sub?.planId ?? null };
    }
    case 'import': {
      const from = need('from');
      if (from !== 'new-api' && from !== 'one-api') throw new GatewayError('invalid_request', '--from must be new-api or one-api');
      const rate = values['quota-per-usd'] ?? '500000';
      if (!/^[1-9]\d{0,15}$/.test(rate)) throw new GatewayError('invalid_request', '--quota-per-usd must be a positive integer');
      const src = await openSource(need('database-url'));
      try {
        const report = await runImport(src, { from, quotaPerUsd: BigInt(rate), dryRun: values['dry-run'] === true });
        const out = values['channels-out'] ?? `imported-channels-${from}.yaml`;
        const { yaml, ...channels } = report.channels;
        if (!report.dryRun && yaml) writeFileSync(out, yaml, { mode: 0o600 });
        return { ...report, channels: { ...channels, file: yaml ? (report.dryRun ? `(would write ${out})` : out) : null } };
      } finally {
        await src.close();
      }
    }
    default:
      throw new Error(`unhandled command ${command}`); // COMMANDS lists every case above
  }
}

let code = 0;
try {
  await runMigrations();
  console.log(JSON.stringify(await run(positionals[0])));
} catch (err) {
  // A server holding the embedded database: refused before anything is written (lib/db.ts).
  const known = err instanceof GatewayError || err instanceof EmbeddedDatabaseBusyError;
  console.error(known ? `error: ${(err as Error).message}` : err);
  code = known ? 2 : 1;
} finally {
  await closeEvents();
  // Every command has finished with Redis by now: process.exit below closes the limiter's socket.
  // (Closing it here made one for the commands that never use it: a connect and a QUIT, up to
  // 0.5 s more per run.)
}
process.exit(code);

// Test accounts made through the same library calls the admin CLI uses.
import { randomBytes } from 'node:crypto';
import { createKey, createUser, setLimits } from '@/lib/accounts/queries';
import { creditBalance } from '@/lib/billing/ledger';
import { usdToPico } from '@/lib/money';
import { getDb } from '@/lib/db';
import { CLI_ACTOR } from '@/lib/audit';
import { setRole } from '@/lib/admin/roles';
import type { TierName } from '@/lib/config';

export interface TestAccount {
  userId: string;
  email: string;
  password: string;
  apiKey: string;
  keyId: string;
}

export async function createAccount(opts: { tier?: TierName; balanceUsd?: string; limits?: Parameters<typeof setLimits>[1] } = {}): Promise<TestAccount> {
  const email = `t-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'correct-horse-9';
  const user = await createUser({ email, password, tier: opts.tier ?? 'free', balancePico: 0n });
  if (opts.balanceUsd) await creditBalance(user.id, 'admin_credit', usdToPico(opts.balanceUsd), { note: 'test' });
  if (opts.limits) await setLimits(user.id, opts.limits);
  const key = await createKey(user.id, 'test');
  return { userId: user.id, email, password, apiKey: key.key, keyId: key.id };
}

/** An operator (role admin, set as the CLI's set-role does). */
export async function createOperator(): Promise<TestAccount> {
  const a = await createAccount();
  await setRole(CLI_ACTOR, a.userId, 'admin');
  return a;
}

/**
 * Signs in through the login API: the session cookies (`name=value; …`) the pages and /api routes
 * take. `from`: extra request headers, or the client address to sign in from (x-forwarded-for).
 */
export async function signIn(baseUrl: string, account: { email: string; password: string }, from: Record<string, string> | string = {}): Promise<string> {
  const headers = typeof from === 'string' ? { 'x-forwarded-for': from } : from;
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email: account.email, password: account.password }),
  });
  if (res.status !== 200) throw new Error(`sign-in of ${account.email}: HTTP ${res.status} ${await res.text()}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

export async function balanceOf(userId: string): Promise<string> {
  const db = await getDb();
  const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
  return user.balanceUsd.toFixed(12);
}

export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

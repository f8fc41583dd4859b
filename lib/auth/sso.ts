// Single sign-on accounts (docs/decisions/052): which gateway account an identity-provider sign-in
// reaches, by its linked identity (provider + subject) first, else by a VERIFIED email, which links it.
// An unverified email never reaches an account: anyone can type any address into many providers.
import { getDb } from '@/lib/db';
import { getConfig } from '@/lib/config';
import { creditBalance } from '@/lib/billing/ledger';
import { emailProblem, normaliseEmail } from '@/lib/auth/password-rules';
import { writeAudit } from '@/lib/admin/audit';

/** What a provider said about the person, as the provider configs map it (lib/auth/sso-providers.ts). */
export interface SsoProfile {
  provider: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

/** Why a sign-in is refused; the login page says each in the reader's language (`?error=Sso…`). */
export type SsoRefusal = 'unverified' | 'suspended' | 'not_allowed';

export const SSO_ERROR_PARAM: Record<SsoRefusal, string> = {
  unverified: 'SsoEmailUnverified',
  suspended: 'SsoSuspended',
  not_allowed: 'SsoNotAllowed',
};

/** Password hash of an account made by SSO: no password matches it (bcrypt compares it as false). */
export const SSO_ONLY_PASSWORD_HASH = '!sso';

export type SsoResolution = { ok: true; userId: string; created: boolean } | { ok: false; reason: SsoRefusal };

export function emailDomain(email: string): string {
  const e = normaliseEmail(email);
  return e.slice(e.lastIndexOf('@') + 1);
}

/**
 * The account this sign-in reaches, linking or creating it: by (provider, subject) when linked before
 * (even if the email there changed since), else by the verified email (an existing account is linked,
 * else one is made). Suspended and organization accounts are refused; a deleted account's old link
 * is dropped (its email no longer names anyone) and the sign-in goes on as a new person.
 */
export async function resolveSsoSignIn(p: SsoProfile): Promise<SsoResolution> {
  const db = await getDb();
  const email = p.email && p.emailVerified && !emailProblem(p.email) ? normaliseEmail(p.email) : null;
  const linked = await db.linkedIdentity.findUnique({ where: { provider_subject: { provider: p.provider, subject: p.subject } } });
  if (linked) {
    const user = await db.user.findUnique({ where: { id: linked.userId } });
    if (user && !user.deletedAt) {
      if (user.status === 'suspended') return { ok: false, reason: 'suspended' };
      await db.linkedIdentity.update({
        where: { provider_subject: { provider: p.provider, subject: p.subject } },
        data: { lastUsedAt: new Date(), ...(email ? { email } : {}) },
      });
      return { ok: true, userId: user.id, created: false };
    }
    await db.linkedIdentity.delete({ where: { provider_subject: { provider: p.provider, subject: p.subject } } });
  }
  if (!email) return { ok: false, reason: 'unverified' };
  const existing = await db.user.findUnique({ where: { email }, include: { organization: true } });
  if (existing) {
    // An organization's own account row is a wallet, not a person (its address is `.invalid` anyway).
    if (existing.organization || existing.deletedAt) return { ok: false, reason: 'not_allowed' };
    if (existing.status === 'suspended') return { ok: false, reason: 'suspended' };
    await link(p, existing.id, email);
    return { ok: true, userId: existing.id, created: false };
  }
  try {
    const user = await db.$transaction(async (tx) => {
      const created = await tx.user.create({ data: { email, passwordHash: SSO_ONLY_PASSWORD_HASH } });
      await tx.linkedIdentity.create({ data: { provider: p.provider, subject: p.subject, userId: created.id, email } });
      await writeAudit(
        { id: created.id, label: email },
        { action: 'account.sso_create', targetType: 'account', targetId: created.id, after: { provider: p.provider, subject: p.subject, email } },
        tx,
      );
      return created;
    });
    const starting = getConfig().startingBalance;
    if (starting > 0n) await creditBalance(user.id, 'admin_credit', starting, { note: 'starting balance' });
    return { ok: true, userId: user.id, created: true };
  } catch (err) {
    // The same person signing in twice at once: the other sign-in made the account; link to it.
    if ((err as { code?: string }).code !== 'P2002') throw err;
    const again = await db.user.findUnique({ where: { email } });
    if (!again) throw err;
    await link(p, again.id, email);
    return { ok: true, userId: again.id, created: false };
  }
}

/** Links the identity to an existing account: a new way into it, so the account's audit trail records it. */
async function link(p: SsoProfile, userId: string, email: string): Promise<void> {
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.linkedIdentity.upsert({
      where: { provider_subject: { provider: p.provider, subject: p.subject } },
      create: { provider: p.provider, subject: p.subject, userId, email },
      update: { userId, email, lastUsedAt: new Date() },
    });
    await writeAudit(
      { id: userId, label: email },
      { action: 'account.sso_link', targetType: 'account', targetId: userId, after: { provider: p.provider, subject: p.subject, email } },
      tx,
    );
  });
}

/** The account a linked identity belongs to (what the session is made for after resolveSsoSignIn). */
export async function linkedUser(provider: string, subject: string): Promise<{ id: string; email: string } | null> {
  const db = await getDb();
  const linked = await db.linkedIdentity.findUnique({ where: { provider_subject: { provider, subject } } });
  if (!linked) return null;
  return db.user.findUnique({ where: { id: linked.userId }, select: { id: true, email: true } });
}

/** The domain of an email when an organization requires SSO for it (password sign-in refused), else null. */
export async function ssoRequiredDomain(email: string): Promise<string | null> {
  if (emailProblem(email)) return null;
  const domain = emailDomain(email);
  const db = await getDb();
  const row = await db.ssoDomain.findUnique({ where: { domain } });
  if (!row) return null;
  const org = await db.organization.findUnique({ where: { id: row.orgId }, select: { deletedAt: true } });
  return org && !org.deletedAt ? domain : null;
}

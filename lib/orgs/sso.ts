// An organization's SSO-required email domains (docs/decisions/052): password sign-in is refused for
// every address at them (lib/auth/login.ts). A domain belongs to one organization at most (409), and
// claiming one takes proof that the claimer controls it: an SSO sign-in with a verified address there.
import { getDb } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { writeAudit } from '@/lib/audit';
import { Prisma } from '@/lib/generated/prisma/client';
import { requireOrgRole, type Person } from './queries';
import { MAX_SSO_DOMAINS } from '@/lib/schemas/orgs';

// The route schema's bound (lib/schemas/orgs.ts).
export { MAX_SSO_DOMAINS };

// Everyone can have an address at these: requiring SSO for one would lock strangers out of their
// password log-in. A short list of the large ones; the proof rule below covers the rest.
const PUBLIC_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'mail.com',
  'yandex.com',
  'qq.com',
  '163.com',
  '126.com',
  'foxmail.com',
  'sina.com',
]);

// A DNS name of labels (letters, digits, inner hyphens; punycode `xn--` included) with a dot, as email domains are.
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The domains of a PUT body, lower-cased and without a leading `@`, each once; 400 for anything else. */
export function parseSsoDomains(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_SSO_DOMAINS || !value.every((d) => typeof d === 'string'))
    throw codedError('invalid_request', 'org.sso_domains_invalid', { max: MAX_SSO_DOMAINS }, { param: 'domains' });
  const domains = new Set<string>();
  for (const raw of value as string[]) {
    const domain = raw.normalize('NFC').trim().toLowerCase().replace(/^@/, '').replace(/\.$/, '');
    if (!DOMAIN.test(domain) || !/[a-z]/.test(domain.slice(domain.lastIndexOf('.') + 1)))
      throw codedError('invalid_request', 'org.sso_domain_invalid', { domain: raw.slice(0, 100) }, { param: 'domains' });
    if (PUBLIC_MAIL_DOMAINS.has(domain)) throw codedError('invalid_request', 'org.sso_domain_public', { domain }, { param: 'domains' });
    domains.add(domain);
  }
  return [...domains].sort();
}

async function domainsOf(orgId: string): Promise<string[]> {
  const db = await getDb();
  const rows = await db.ssoDomain.findMany({ where: { orgId }, orderBy: { domain: 'asc' } });
  return rows.map((r) => r.domain);
}

export async function getSsoDomains(orgId: string, person: Person) {
  await requireOrgRole(orgId, person, 'sso');
  return { domains: await domainsOf(orgId) };
}

/** Replaces the organization's SSO-required domains; audit-logged with before and after. */
export async function setSsoDomains(orgId: string, person: Person, body: Record<string, unknown>) {
  await requireOrgRole(orgId, person, 'sso');
  const domains = parseSsoDomains(body.domains);
  const db = await getDb();
  const before = await domainsOf(orgId);
  const added = domains.filter((d) => !before.includes(d));
  if (added.length > 0) {
    // Proof of control: the person signed in through SSO with an address at the domain, which the
    // identity provider verified (only verified addresses are ever linked: lib/auth/sso.ts).
    const identities = await db.linkedIdentity.findMany({ where: { userId: person.id }, select: { email: true } });
    const proven = new Set(identities.map((i) => i.email?.slice(i.email.lastIndexOf('@') + 1)).filter(Boolean));
    const unproven = added.find((d) => !proven.has(d));
    if (unproven) throw codedError('forbidden', 'org.sso_domain_unproven', { domain: unproven }, { param: 'domains' });
    const taken = await db.ssoDomain.findFirst({ where: { domain: { in: added }, orgId: { not: orgId } } });
    if (taken) throw codedError('conflict', 'org.sso_domain_taken', { domain: taken.domain }, { param: 'domains' });
  }
  try {
    await db.$transaction(async (tx) => {
      await tx.ssoDomain.deleteMany({ where: { orgId, domain: { notIn: domains } } });
      if (added.length > 0) await tx.ssoDomain.createMany({ data: added.map((domain) => ({ domain, orgId })) });
      await writeAudit(
        { id: person.id, label: person.email },
        { action: 'org.sso_domains', targetType: 'organization', targetId: orgId, before: { domains: before }, after: { domains } },
        tx,
      );
    });
  } catch (err) {
    // Claimed by another organization between the check and the write: the primary key says no.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      const conflicting = await db.ssoDomain.findFirst({ where: { domain: { in: added }, orgId: { not: orgId } } });
      throw codedError('conflict', 'org.sso_domain_taken', { domain: conflicting?.domain ?? added[0] }, { param: 'domains' });
    }
    throw err;
  }
  return { domains };
}

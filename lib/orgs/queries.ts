// Organizations, members and invitations (docs/decisions/040). An organization's id is the id of its
// account row (User), which owns balance, keys, ledger and logs like any account; the rows here say
// who acts for it and as what. Every change is written to the audit log in its transaction.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { getDb, isUuid } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { authSecret } from '@/lib/secrets';
import { publishGatewayEvent } from '@/lib/events';
import { writeAudit, type Actor } from '@/lib/admin/audit';
import { decimalToPico, formatPico, usdToPico } from '@/lib/billing/money';
import { normaliseEmail, emailProblem } from '@/lib/auth/password-rules';
import { membershipOf } from './access';
import { isOrgRole, orgAllowed, type OrgAction, type OrgRole } from './roles';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

export interface Person {
  id: string;
  email: string;
}

const actorOf = (p: Person): Actor => ({ id: p.id, label: p.email });

/** The person's role in the organization, or 403 when it does not allow `action` (404-like for non-members). */
export async function requireOrgRole(orgId: string, person: Person, action: OrgAction): Promise<{ role: OrgRole; name: string }> {
  if (orgId === person.id) throw codedError('invalid_request', 'org.personal');
  const m = await membershipOf(orgId, person.id);
  if (!m) throw codedError('forbidden', 'org.not_member');
  if (!orgAllowed(m.role, action)) throw codedError('forbidden', 'org.role_refused', { role: m.role });
  return m;
}

function orgName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (!name || name.length > 80 || /[\u0000-\u001f]/.test(name)) throw codedError('invalid_request', 'org.name_invalid', undefined, { param: 'name' });
  return name;
}

/** A new organization: its own account row (no password can sign in to it), the creator its owner. */
export async function createOrganization(person: Person, body: Record<string, unknown>) {
  const name = orgName(body.name);
  const db = await getDb();
  const id = randomUUID();
  await db.$transaction(async (tx) => {
    // Not an address anyone can sign in with: `.invalid` is reserved, and the hash matches no password.
    await tx.user.create({ data: { id, email: `org-${id}@organizations.invalid`, passwordHash: '!organization' } });
    await tx.organization.create({ data: { id, name } });
    await tx.membership.create({ data: { orgId: id, userId: person.id, role: 'owner' } });
    await writeAudit(actorOf(person), { action: 'org.create', targetType: 'organization', targetId: id, after: { name } }, tx);
  });
  return { id, name, role: 'owner' as OrgRole, personal: false };
}

/** The person's organizations: their personal account first, then each they belong to. */
export async function listOrganizations(person: Person) {
  const db = await getDb();
  const rows = await db.membership.findMany({
    where: { userId: person.id, org: { deletedAt: null } },
    include: { org: true },
    orderBy: { createdAt: 'asc' },
  });
  return [
    { id: person.id, name: null as string | null, role: 'owner' as OrgRole, personal: true },
    ...rows.map((m) => ({ id: m.orgId, name: m.org.name, role: m.role as OrgRole, personal: false })),
  ];
}

export async function renameOrganization(orgId: string, person: Person, body: Record<string, unknown>) {
  const m = await requireOrgRole(orgId, person, 'rename');
  const name = orgName(body.name);
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.organization.update({ where: { id: orgId }, data: { name } });
    await writeAudit(actorOf(person), { action: 'org.rename', targetType: 'organization', targetId: orgId, before: { name: m.name }, after: { name } }, tx);
  });
  return { id: orgId, name, role: m.role, personal: false };
}

/** Revokes keys and tells every instance (the key cache drops them at once). */
async function revokeKeys(where: { userId: string; createdById?: string }): Promise<number> {
  const db = await getDb();
  const keys = await db.apiKey.findMany({ where: { ...where, revokedAt: null }, select: { id: true, hash: true } });
  if (keys.length === 0) return 0;
  await db.apiKey.updateMany({ where: { id: { in: keys.map((k) => k.id) } }, data: { revokedAt: new Date() } });
  await Promise.all(keys.map((k) => publishGatewayEvent({ type: 'key-revoked', hash: k.hash })));
  return keys.length;
}

/** Deleting: every key revoked, the account suspended (its ledger stays), nobody a member any more. */
export async function deleteOrganization(orgId: string, person: Person) {
  const m = await requireOrgRole(orgId, person, 'delete');
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.organization.update({ where: { id: orgId }, data: { deletedAt: new Date() } });
    await tx.user.update({ where: { id: orgId }, data: { status: 'suspended', deletedAt: new Date() } });
    await writeAudit(actorOf(person), { action: 'org.delete', targetType: 'organization', targetId: orgId, before: { name: m.name } }, tx);
  });
  await revokeKeys({ userId: orgId });
  await publishGatewayEvent({ type: 'account-changed', userId: orgId, suspended: true });
  return { id: orgId, deleted: true };
}

/** Members with their role, monthly budget and spend this UTC month (from their keys). */
export async function listMembers(orgId: string, person: Person) {
  await requireOrgRole(orgId, person, 'view');
  const db = await getDb();
  const [rows, spend] = await Promise.all([
    db.membership.findMany({ where: { orgId }, include: { user: { select: { email: true } } }, orderBy: { createdAt: 'asc' } }),
    spendByMember(orgId, startOfUtcMonth(new Date())),
  ]);
  return rows.map((m) => ({
    user_id: m.userId,
    email: m.user.email,
    role: m.role,
    monthly_budget_usd: m.monthlyBudgetUsd === null ? null : formatPico(decimalToPico(m.monthlyBudgetUsd)),
    spend_this_month_usd: formatPico(spend.get(m.userId) ?? 0n),
    joined_at: m.createdAt.toISOString(),
  }));
}

function startOfUtcMonth(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

/** Spend (USD pico) by the member who created the key, from the daily rollup; '' for keys nobody owns. */
export async function spendByMember(orgId: string, from: Date, to?: Date): Promise<Map<string, bigint>> {
  const db = await getDb();
  const toDay = to ?? new Date('9999-12-31');
  const rows = await db.$queryRaw<{ member: string | null; cost: string }[]>`
    SELECT k."createdById"::text AS member, COALESCE(SUM(u."costUsd"), 0)::text AS cost
    FROM "UsageDaily" u LEFT JOIN "ApiKey" k ON k.id = u."apiKeyId"
    WHERE u."userId" = ${orgId}::uuid AND u.day >= ${from}::date AND u.day <= ${toDay}::date
    GROUP BY 1`;
  return new Map(rows.map((r) => [r.member ?? '', usdToPico(r.cost)]));
}

/** The usage report by member (`GET /api/orgs/:id/usage`): every member, with their keys' spend. */
export async function usageByMember(orgId: string, person: Person, from: Date, to: Date) {
  await requireOrgRole(orgId, person, 'spend');
  const db = await getDb();
  const [members, spend] = await Promise.all([
    db.membership.findMany({ where: { orgId }, include: { user: { select: { email: true } } } }),
    spendByMember(orgId, from, to),
  ]);
  const known = new Set(members.map((m) => m.userId));
  const rows = members.map((m) => ({
    user_id: m.userId as string | null,
    email: m.user.email as string | null,
    cost_usd: formatPico(spend.get(m.userId) ?? 0n),
  }));
  // Former members and keys from before organizations still count.
  let other = 0n;
  for (const [id, cost] of spend) if (!known.has(id)) other += cost;
  if (other > 0n) rows.push({ user_id: null, email: null, cost_usd: formatPico(other) });
  return rows;
}

function parseBudget(value: unknown): bigint | null {
  if (value === null) return null;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,12}(\.\d{1,12})?$/.test(text))
    throw codedError('invalid_request', 'org.budget_invalid', undefined, { param: 'monthly_budget_usd' });
  return usdToPico(text);
}

/** Changes a member's role or monthly budget. The owner's role moves only by transfer; an admin cannot make owners. */
export async function updateMember(orgId: string, person: Person, userId: string, body: Record<string, unknown>) {
  await requireOrgRole(orgId, person, 'members');
  const db = await getDb();
  const target = isUuid(userId) ? await db.membership.findUnique({ where: { orgId_userId: { orgId, userId } } }) : null;
  if (!target) throw codedError('not_found', 'org.member_not_found');
  const data: { role?: OrgRole; monthlyBudgetUsd?: string | null; budgetVersion?: { increment: number } } = {};
  if (body.role !== undefined) {
    if (!isOrgRole(body.role)) throw codedError('invalid_request', 'org.role_invalid', undefined, { param: 'role' });
    if (body.role === 'owner' || target.role === 'owner') throw codedError('forbidden', 'org.owner_stays');
    data.role = body.role;
  }
  if (body.monthly_budget_usd !== undefined) {
    const budget = parseBudget(body.monthly_budget_usd);
    data.monthlyBudgetUsd = budget === null ? null : formatPico(budget);
    // A budget edit starts a new live spend counter, loaded from the database (lib/keys/admission.ts,
    // docs/decisions/056): one left from before a time without a budget no longer follows the spend.
    const was = target.monthlyBudgetUsd === null ? null : formatPico(decimalToPico(target.monthlyBudgetUsd));
    if (data.monthlyBudgetUsd !== was) data.budgetVersion = { increment: 1 };
  }
  const updated = await db.$transaction(async (tx) => {
    const row = await tx.membership.update({ where: { orgId_userId: { orgId, userId } }, data });
    await writeAudit(
      actorOf(person),
      {
        action: 'org.member_update',
        targetType: 'organization',
        targetId: orgId,
        before: { user_id: userId, role: target.role, monthly_budget_usd: target.monthlyBudgetUsd },
        after: { user_id: userId, role: row.role, monthly_budget_usd: row.monthlyBudgetUsd },
      },
      tx,
    );
    return row;
  });
  // The member's keys are cached with the budget on every instance: they read it again.
  if (data.budgetVersion) await publishGatewayEvent({ type: 'account-changed', userId: orgId });
  return {
    user_id: userId,
    role: updated.role,
    monthly_budget_usd: updated.monthlyBudgetUsd === null ? null : formatPico(decimalToPico(updated.monthlyBudgetUsd)),
  };
}

/** Removes a member (an admin, or the member leaving); their keys in the organization are revoked at once. */
export async function removeMember(orgId: string, person: Person, userId: string) {
  const self = userId === person.id;
  const m = await requireOrgRole(orgId, person, self ? 'view' : 'members');
  const db = await getDb();
  const target = isUuid(userId) ? await db.membership.findUnique({ where: { orgId_userId: { orgId, userId } } }) : null;
  if (!target) throw codedError('not_found', 'org.member_not_found');
  if (target.role === 'owner') throw codedError('forbidden', 'org.owner_stays');
  if (target.role === 'admin' && m.role !== 'owner' && !self) throw codedError('forbidden', 'org.owner_only');
  await db.$transaction(async (tx) => {
    await tx.membership.delete({ where: { orgId_userId: { orgId, userId } } });
    await writeAudit(
      actorOf(person),
      { action: 'org.member_remove', targetType: 'organization', targetId: orgId, before: { user_id: userId, role: target.role } },
      tx,
    );
  });
  const revoked = await revokeKeys({ userId: orgId, createdById: userId });
  return { user_id: userId, removed: true, keys_revoked: revoked };
}

/** The owner hands the organization to another member, and becomes an admin. */
export async function transferOwnership(orgId: string, person: Person, body: Record<string, unknown>) {
  await requireOrgRole(orgId, person, 'transfer');
  const userId = typeof body.user_id === 'string' ? body.user_id : '';
  const db = await getDb();
  const target = isUuid(userId) && userId !== person.id ? await db.membership.findUnique({ where: { orgId_userId: { orgId, userId } } }) : null;
  if (!target) throw codedError('not_found', 'org.member_not_found', undefined, { param: 'user_id' });
  await db.$transaction(async (tx) => {
    await tx.membership.update({ where: { orgId_userId: { orgId, userId } }, data: { role: 'owner' } });
    await tx.membership.update({ where: { orgId_userId: { orgId, userId: person.id } }, data: { role: 'admin' } });
    await writeAudit(
      actorOf(person),
      { action: 'org.transfer', targetType: 'organization', targetId: orgId, before: { owner: person.id }, after: { owner: userId } },
      tx,
    );
  });
  return { id: orgId, owner: userId };
}

// Invitation links: the invitation's id and expiry signed with the auth secret (HMAC-SHA256), so a
// link cannot be forged or extended; the row holds whether it was used or revoked.
function sign(id: string, exp: number): string {
  return createHmac('sha256', authSecret()).update(`invite:${id}:${exp}`).digest('base64url');
}

export function invitationToken(id: string, expiresAt: Date): string {
  const exp = expiresAt.getTime();
  return `${id}.${exp.toString(36)}.${sign(id, exp)}`;
}

export function readInvitationToken(token: string): { id: string; exp: number } | null {
  const [id, expText, mac] = token.split('.');
  if (!id || !expText || !mac || !isUuid(id)) return null;
  const exp = parseInt(expText, 36);
  if (!Number.isFinite(exp)) return null;
  const want = Buffer.from(sign(id, exp));
  const got = Buffer.from(mac);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  return { id, exp };
}

export function invitationLink(origin: string, token: string): string {
  return `${origin}/invite/${encodeURIComponent(token)}`;
}

export async function createInvitation(orgId: string, person: Person, body: Record<string, unknown>, origin: string) {
  const m = await requireOrgRole(orgId, person, 'invite');
  const email = typeof body.email === 'string' ? normaliseEmail(body.email) : '';
  if (emailProblem(email)) throw codedError('invalid_request', 'auth.email_invalid', undefined, { param: 'email' });
  const role = body.role ?? 'developer';
  if (!isOrgRole(role) || role === 'owner') throw codedError('invalid_request', 'org.role_invalid', undefined, { param: 'role' });
  if (role === 'admin' && m.role !== 'owner') throw codedError('forbidden', 'org.owner_only');
  const db = await getDb();
  const existing = await db.membership.findFirst({ where: { orgId, user: { email } } });
  if (existing) throw codedError('conflict', 'org.already_member', undefined, { param: 'email' });
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
  const row = await db.$transaction(async (tx) => {
    const inv = await tx.invitation.create({ data: { orgId, email, role, invitedBy: person.id, expiresAt } });
    await writeAudit(actorOf(person), { action: 'org.invite', targetType: 'organization', targetId: orgId, after: { invitation: inv.id, email, role } }, tx);
    return inv;
  });
  const link = invitationLink(origin, invitationToken(row.id, expiresAt));
  return { invitation: publicInvitation(row), link, org_name: m.name };
}

type InvitationRow = { id: string; email: string; role: string; expiresAt: Date; createdAt: Date; acceptedAt: Date | null; revokedAt: Date | null };

function publicInvitation(row: InvitationRow) {
  const status = row.acceptedAt ? 'accepted' : row.revokedAt ? 'revoked' : row.expiresAt.getTime() <= Date.now() ? 'expired' : 'pending';
  return { id: row.id, email: row.email, role: row.role, status, expires_at: row.expiresAt.toISOString(), created_at: row.createdAt.toISOString() };
}

export async function listInvitations(orgId: string, person: Person) {
  await requireOrgRole(orgId, person, 'invite');
  const db = await getDb();
  const rows = await db.invitation.findMany({ where: { orgId }, orderBy: { createdAt: 'desc' }, take: 200 });
  return rows.map(publicInvitation);
}

export async function revokeInvitation(orgId: string, person: Person, invitationId: string) {
  await requireOrgRole(orgId, person, 'invite');
  const db = await getDb();
  const row = isUuid(invitationId) ? await db.invitation.findFirst({ where: { id: invitationId, orgId } }) : null;
  if (!row) throw codedError('not_found', 'org.invite_invalid');
  const updated = await db.$transaction(async (tx) => {
    const inv = row.revokedAt || row.acceptedAt ? row : await tx.invitation.update({ where: { id: row.id }, data: { revokedAt: new Date() } });
    await writeAudit(
      actorOf(person),
      { action: 'org.invite_revoke', targetType: 'organization', targetId: orgId, before: { invitation: row.id, email: row.email } },
      tx,
    );
    return inv;
  });
  return publicInvitation(updated);
}

/** What an invitation link offers (the /invite page), or why it cannot be used. */
export async function describeInvitation(token: string) {
  const claims = readInvitationToken(token);
  if (!claims) throw codedError('not_found', 'org.invite_invalid');
  const db = await getDb();
  const row = await db.invitation.findUnique({ where: { id: claims.id }, include: { org: true } });
  if (!row || row.org.deletedAt) throw codedError('not_found', 'org.invite_invalid');
  if (row.acceptedAt || row.revokedAt || row.expiresAt.getTime() <= Date.now() || claims.exp <= Date.now()) throw codedError('conflict', 'org.invite_expired');
  return { id: row.id, orgId: row.orgId, orgName: row.org.name, email: row.email, role: row.role as OrgRole };
}

/** Accepts an invitation as the signed-in person, whose email must be the one invited. Single use. */
export async function acceptInvitation(token: string, person: Person) {
  const inv = await describeInvitation(token);
  if (normaliseEmail(person.email) !== inv.email) throw codedError('forbidden', 'org.invite_email_mismatch', { email: inv.email });
  const db = await getDb();
  await db.$transaction(async (tx) => {
    const used = await tx.invitation.updateMany({
      where: { id: inv.id, acceptedAt: null, revokedAt: null },
      data: { acceptedAt: new Date(), acceptedBy: person.id },
    });
    if (used.count !== 1) throw codedError('conflict', 'org.invite_expired');
    await tx.membership.upsert({
      where: { orgId_userId: { orgId: inv.orgId, userId: person.id } },
      create: { orgId: inv.orgId, userId: person.id, role: inv.role },
      update: {},
    });
    await writeAudit(
      actorOf(person),
      { action: 'org.invite_accept', targetType: 'organization', targetId: inv.orgId, after: { user_id: person.id, role: inv.role } },
      tx,
    );
  });
  return { id: inv.orgId, name: inv.orgName, role: inv.role, personal: false };
}

/** The organization's audit trail, for its owners and admins. */
export async function orgAudit(orgId: string, person: Person, limit = 100) {
  await requireOrgRole(orgId, person, 'audit');
  const db = await getDb();
  const rows = await db.auditLog.findMany({ where: { targetType: 'organization', targetId: orgId }, orderBy: { id: 'desc' }, take: Math.min(limit, 500) });
  return rows.map((r) => ({ id: r.id.toString(), at: r.createdAt.toISOString(), actor: r.actor, action: r.action, before: r.before, after: r.after }));
}

// Projects (issue 41 item 4, docs/decisions/056): a label in an account (an organization or a
// personal account) with its own monthly budget and model allowlist. A key optionally belongs to
// one; the gateway then refuses models outside the project's list and reserves each request
// against the project's monthly budget in the admission's one limiter call (lib/keys/admission.ts).
import { getDb, isUuid } from '@/lib/db';
import { codedError } from '@/lib/errors';
import { getConfig } from '@/lib/config';
import { publishGatewayEvent } from '@/lib/events';
import { writeAudit, type Actor } from '@/lib/admin/audit';
import { formatPico, usdToPico } from '@/lib/billing/money';
import { monthOf, nameProblem, parseKeyControls } from '@/lib/keys/controls';

/** Most projects an account may hold (each is a budget counter and a line of every usage report). */
export const MAX_PROJECTS = 100;

interface ProjectRow {
  id: string;
  name: string;
  monthlyBudgetUsd: { toFixed(dp: number): string } | null;
  models: string[];
  createdAt: Date;
}

function publicProject(row: ProjectRow, keys: number, spent: bigint) {
  return {
    id: row.id,
    name: row.name,
    monthly_budget_usd: row.monthlyBudgetUsd === null ? null : formatPico(usdToPico(row.monthlyBudgetUsd.toFixed(12))),
    models: row.models,
    keys,
    spend_this_month_usd: formatPico(spent),
    month: monthOf(Date.now()).label,
    created_at: row.createdAt.toISOString(),
  };
}

/** The account's spend this UTC month per project (pico-USD), from the daily rollup. */
async function monthSpendByProject(userId: string): Promise<Map<string, bigint>> {
  const db = await getDb();
  const since = new Date(monthOf(Date.now()).start).toISOString().slice(0, 10);
  const rows = await db.$queryRaw<{ project: string; spent: string }[]>`
    SELECT "projectId"::text AS project, SUM("costUsd")::text AS spent FROM "UsageDailyProject"
    WHERE "userId" = ${userId}::uuid AND "day" >= ${since}::date GROUP BY 1`;
  return new Map(rows.map((r) => [r.project, usdToPico(r.spent)]));
}

export async function listProjects(userId: string) {
  const db = await getDb();
  const [rows, keys, spend] = await Promise.all([
    db.project.findMany({ where: { userId }, orderBy: { createdAt: 'asc' } }),
    db.apiKey.groupBy({ by: ['projectId'], where: { userId, revokedAt: null, projectId: { not: null } }, _count: { _all: true } }),
    monthSpendByProject(userId),
  ]);
  const count = new Map(keys.map((k) => [k.projectId, k._count._all]));
  return rows.map((r) => publicProject(r, count.get(r.id) ?? 0, spend.get(r.id) ?? 0n));
}

/** The project fields of a body (name, monthly_budget_usd, models), validated as a key's controls are: a 400 naming each bad field. */
function parseProjectBody(body: Record<string, unknown>, creating: boolean) {
  const name = body.name === undefined && !creating ? undefined : typeof body.name === 'string' ? body.name.trim() : '';
  const bad = name === undefined ? null : nameProblem(name);
  const models = getConfig().models;
  const c = parseKeyControls({ monthly_budget_usd: body.monthly_budget_usd, models: body.models }, (m) => models.has(m), Date.now(), bad ? [bad] : []);
  const data: { name?: string; monthlyBudgetUsd?: string | null; models?: string[] } = {};
  if (name !== undefined) data.name = name;
  if (c.monthlyBudgetPico !== undefined) data.monthlyBudgetUsd = c.monthlyBudgetPico === null ? null : formatPico(c.monthlyBudgetPico);
  if (c.models !== undefined) data.models = c.models;
  return data;
}

async function findProject(userId: string, id: string) {
  const db = await getDb();
  const row = isUuid(id) ? await db.project.findFirst({ where: { id, userId } }) : null;
  if (!row) throw codedError('not_found', 'project.not_found');
  return row;
}

/** Every instance drops its cached keys of the account: the next request reads the project again. */
const refreshKeys = (userId: string) => publishGatewayEvent({ type: 'account-changed', userId });

export async function createProject(userId: string, actor: Actor, body: Record<string, unknown>) {
  const data = parseProjectBody(body, true);
  const db = await getDb();
  const row = await db.$transaction(async (tx) => {
    // Serialises this account's creations, so concurrent ones cannot both see room for one more.
    await tx.$queryRaw`SELECT 1 FROM "User" WHERE id = ${userId}::uuid FOR UPDATE`;
    const count = await tx.project.count({ where: { userId } });
    if (count >= MAX_PROJECTS) throw codedError('conflict', 'project.too_many', { cap: MAX_PROJECTS });
    const created = await tx.project.create({ data: { userId, name: data.name!, monthlyBudgetUsd: data.monthlyBudgetUsd ?? null, models: data.models ?? [] } });
    // On the account's trail (an organization's owners and admins read it at /api/orgs/:id/audit).
    await writeAudit(actor, { action: 'project.create', targetType: 'organization', targetId: userId, after: { project_id: created.id, ...data } }, tx);
    return created;
  });
  return publicProject(row, 0, 0n);
}

export async function updateProject(userId: string, actor: Actor, id: string, body: Record<string, unknown>) {
  const before = await findProject(userId, id);
  const data = parseProjectBody(body, false);
  const budgetChanged =
    data.monthlyBudgetUsd !== undefined &&
    (data.monthlyBudgetUsd ?? null) !== (before.monthlyBudgetUsd === null ? null : formatPico(usdToPico(before.monthlyBudgetUsd.toFixed(12))));
  const db = await getDb();
  const row = await db.$transaction(async (tx) => {
    // A budget edit starts a new live counter, loaded from the database (lib/keys/admission.ts).
    const updated = await tx.project.update({ where: { id: before.id }, data: { ...data, ...(budgetChanged ? { budgetVersion: { increment: 1 } } : {}) } });
    await writeAudit(
      actor,
      {
        action: 'project.update',
        targetType: 'organization',
        targetId: userId,
        before: { project_id: id, name: before.name, monthly_budget_usd: before.monthlyBudgetUsd?.toFixed(12) ?? null, models: before.models },
        after: data,
      },
      tx,
    );
    return updated;
  });
  await refreshKeys(userId);
  const [project] = (await listProjects(userId)).filter((p) => p.id === row.id);
  return project;
}

/** Deletes a project: its keys stay, outside any project; its spend stays in the reports as a deleted project's. */
export async function deleteProject(userId: string, actor: Actor, id: string) {
  const before = await findProject(userId, id);
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.apiKey.updateMany({ where: { userId, projectId: before.id }, data: { projectId: null } });
    await tx.project.delete({ where: { id: before.id } });
    await writeAudit(actor, { action: 'project.delete', targetType: 'organization', targetId: userId, before: { project_id: id, name: before.name } }, tx);
  });
  await refreshKeys(userId);
  return { id, deleted: true };
}

/**
 * A key body's `project_id` (or `projectId`): undefined when absent, null to take the key out of
 * its project, else the id of a project of the same account (400 naming the field otherwise).
 */
export async function projectIdOf(userId: string, body: Record<string, unknown>): Promise<string | null | undefined> {
  const value = body.project_id !== undefined ? body.project_id : body.projectId;
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const db = await getDb();
  const found = typeof value === 'string' && isUuid(value) ? await db.project.findFirst({ where: { id: value, userId }, select: { id: true } }) : null;
  if (!found) throw codedError('invalid_request', 'project.not_in_account', undefined, { param: 'project_id' });
  return found.id;
}

/** Names of the account's projects by id (usage reports). */
export async function projectNames(userId: string): Promise<Map<string, string>> {
  const db = await getDb();
  const rows = await db.project.findMany({ where: { userId }, select: { id: true, name: true } });
  return new Map(rows.map((r) => [r.id, r.name]));
}

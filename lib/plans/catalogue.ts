// Plans edited in the console (issue 42 item 1): PlanOverride rows replace or add to the operator
// config's plans, or retire one (offered no more; its subscribers keep it). The merged set lives in
// the config's own `plans` map, updated in place, so every reader (admission, pages, Stripe) sees it
// without asking. Every instance reads the rows at start, every SYNC_MS and at once when another
// instance announces an edit (lib/events.ts), so an edit reaches all of them within a second.
import { getConfig, planOf, type GatewayConfig, type PlanInfo } from '@/lib/config';
import { planProblems, planSchema, type RawPlan } from '@/lib/config/schema';
import { getDb } from '@/lib/db';
import { codedError, GatewayError } from '@/lib/errors';
import { onGatewayEvent, publishGatewayEvent } from '@/lib/events';
import { startPeriodic } from '@/lib/periodic';
import { singleton } from '@/lib/singleton';
import { writeAudit, type Actor } from '@/lib/admin/audit';
import type { Prisma } from '@/lib/generated/prisma/client';

const SYNC_MS = 30_000;

interface Catalogue {
  /** The config file's plans, per config object (a reloaded config starts from its own). */
  base: WeakMap<GatewayConfig, Map<string, PlanInfo>>;
  rows: { id: string; data: unknown; retired: boolean }[];
  /** startPlanSync ran: one event listener and one timer per process. */
  syncing?: boolean;
}

const state = () => singleton<Catalogue>('plan-catalogue', () => ({ base: new WeakMap(), rows: [] }));

/** Applies the rows to the config's plan map: the file's plans, replaced, added to or retired by the console's. */
export function applyPlanRows(cfg: GatewayConfig, rows: Catalogue['rows']): void {
  const s = state();
  let base = s.base.get(cfg);
  if (!base) {
    base = new Map(cfg.plans);
    s.base.set(cfg, base);
  }
  const merged = new Map(base);
  for (const row of rows) {
    const parsed = row.data === null || row.data === undefined ? null : planSchema.safeParse(row.data);
    // A row that no longer validates (a model removed from the config since) is skipped, not fatal.
    const plan = parsed?.success && planProblems(parsed.data, new Set(cfg.models.keys())).length === 0 ? planOf(parsed.data, 'console') : merged.get(row.id);
    if (!plan) continue;
    merged.set(row.id, { ...plan, retired: row.retired || undefined });
  }
  cfg.plans.clear();
  for (const [id, plan] of merged) cfg.plans.set(id, plan);
}

export async function refreshPlans(): Promise<void> {
  const db = await getDb();
  const rows = await db.planOverride.findMany({ orderBy: { id: 'asc' } });
  state().rows = rows.map((r) => ({ id: r.id, data: r.data, retired: r.retired }));
  applyPlanRows(getConfig(), state().rows);
}

/** Starts keeping this instance's plans current; a second call (another entry point of the same process) does nothing. */
export function startPlanSync(): void {
  const s = state();
  if (s.syncing) return;
  s.syncing = true;
  onGatewayEvent((event) => {
    if (event.type === 'plans-changed') void refreshPlans().catch(() => undefined);
  });
  startPeriodic('plan-sync', SYNC_MS, refreshPlans, { runNow: true });
}

/** The plans people may take now (not retired). */
export function offeredPlans(cfg: GatewayConfig = getConfig()): PlanInfo[] {
  return [...cfg.plans.values()].filter((p) => !p.retired);
}

/** A plan's fields as the config file writes them (the console's editor starts from these). */
export function rawPlanOf(plan: PlanInfo): RawPlan {
  const money = (pico: bigint) => {
    const whole = pico / 1_000_000_000_000n;
    const frac = (pico % 1_000_000_000_000n).toString().padStart(12, '0').replace(/0+$/, '');
    return frac ? `${whole}.${frac}` : String(whole);
  };
  return {
    id: plan.id,
    name: plan.name,
    ...(plan.description ? { description: plan.description } : {}),
    price_usd_monthly: money(plan.priceMonthly),
    unit: plan.unit,
    windows: plan.windows.map((w) => ({
      name: w.name,
      ...(w.ms % 86_400_000 === 0 ? { days: w.ms / 86_400_000 } : { hours: w.ms / 3_600_000 }),
      limit: plan.unit === 'usd' ? money(w.cap) : String(w.cap),
    })),
    models: plan.models ? [...plan.models] : ['*'],
    ...(plan.tier ? { tier: plan.tier } : {}),
    overflow: plan.overflow,
    ...(plan.stripePriceId ? { stripe_price_id: plan.stripePriceId } : {}),
  };
}

/** Validates a plan as the console sends it: a 400 naming every bad field. */
export function parsePlan(data: unknown, id: string): RawPlan {
  const parsed = planSchema.safeParse(data);
  const fields = parsed.success
    ? planProblems(parsed.data, new Set(getConfig().models.keys())).map((p) => ({ field: p.path.join('.'), message: p.message }))
    : parsed.error.issues.map((i) => ({ field: i.path.join('.') || '(plan)', message: i.message }));
  if (parsed.success && parsed.data.id !== id) fields.push({ field: 'id', message: `must be ${id}, the plan being saved` });
  if (fields.length > 0 || !parsed.success) {
    const list = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    throw new GatewayError('invalid_request', `Invalid plan: ${list}`, { param: fields[0]?.field ?? 'plan' });
  }
  return parsed.data;
}

async function announce(): Promise<void> {
  await refreshPlans();
  await publishGatewayEvent({ type: 'plans-changed' }).catch(() => undefined);
}

/** Saves a plan (new, or replacing the config's or an earlier edit) from the console. */
export async function savePlan(actor: Actor, id: string, data: Record<string, unknown>): Promise<PlanInfo> {
  // The id is the URL's; a body naming another is refused (parsePlan).
  const plan = parsePlan({ id, ...data }, id);
  const db = await getDb();
  await db.$transaction(async (tx) => {
    const before = await tx.planOverride.findUnique({ where: { id } });
    const json = plan as unknown as Prisma.InputJsonValue;
    await tx.planOverride.upsert({ where: { id }, create: { id, data: json, updatedBy: actor.label }, update: { data: json, updatedBy: actor.label } });
    await writeAudit(actor, { action: 'plan.save', targetType: 'plan', targetId: id, before: before?.data ?? undefined, after: plan }, tx);
  });
  await announce();
  return getConfig().plans.get(id)!;
}

/** Retires a plan (no longer offered, its subscribers keep it) or offers it again. */
export async function setPlanRetired(actor: Actor, id: string, retired: boolean): Promise<void> {
  if (!getConfig().plans.has(id)) throw codedError('not_found', 'plan.unknown', { plan: id }, { param: 'id' });
  const db = await getDb();
  await db.$transaction(async (tx) => {
    await tx.planOverride.upsert({ where: { id }, create: { id, retired, updatedBy: actor.label }, update: { retired, updatedBy: actor.label } });
    await writeAudit(actor, { action: retired ? 'plan.retire' : 'plan.offer', targetType: 'plan', targetId: id }, tx);
  });
  await announce();
}

/** Drops the console's edits of a plan: the config file's version again (a console-only plan is removed). */
export async function resetPlan(actor: Actor, id: string): Promise<void> {
  const db = await getDb();
  await db.$transaction(async (tx) => {
    const deleted = await tx.planOverride.deleteMany({ where: { id } });
    if (deleted.count === 0) throw codedError('not_found', 'plan.unknown', { plan: id }, { param: 'id' });
    await writeAudit(actor, { action: 'plan.reset', targetType: 'plan', targetId: id }, tx);
  });
  await announce();
}

// GET /api/admin/accounts/:id - an account with its keys, recent requests and ledger
// POST /api/admin/accounts/:id - one operator action: set_tier, set_status, adjust_balance, set_limits, set_role, set_region, grant_plan, end_plan
import { z } from 'zod';
import { apiRoute, json } from '@/lib/http/api';
import { getConfig, tierNames } from '@/lib/config';
import { endPlan, grantPlan, MAX_PLAN_DAYS, planOrThrow, planStatus } from '@/lib/plans/subscriptions';
import { serializePlanStatus } from '@/lib/plans/serialize';
import { requireAdmin } from '@/lib/admin/guard';
import { accountDetail, adminAdjustBalance, adminSetLimits, adminSetRegion, adminSetStatus, adminSetTier } from '@/lib/admin/accounts';
import { REGION_PATTERN } from '@/lib/region';
import { setRole } from '@/lib/admin/roles';
import { readBody, usdAmount } from '@/lib/admin/input';
import { serializeAccount, serializeDetail } from '@/lib/admin/serialize';
import { formatPico } from '@/lib/money';

const positive = z.number().int().min(1).max(100_000_000);
const action = z.discriminatedUnion('action', [
  z.object({ action: z.literal('set_tier'), tier: z.enum(tierNames), pinned: z.boolean().default(true) }),
  z.object({ action: z.literal('set_status'), status: z.enum(['active', 'suspended']) }),
  z.object({ action: z.literal('adjust_balance'), amount_usd: usdAmount, note: z.string().max(500).default('') }),
  z.object({
    action: z.literal('set_limits'),
    limits: z
      .object({ rpm: positive.optional(), rph: positive.optional(), tokensPerDay: positive.nullable().optional(), concurrency: positive.optional() })
      .strict(),
  }),
  z.object({ action: z.literal('set_role'), role: z.enum(['user', 'admin']) }),
  z.object({ action: z.literal('set_region'), region: z.string().regex(REGION_PATTERN, 'a region name such as cn, eu or us').nullable() }),
  z.object({ action: z.literal('grant_plan'), plan: z.string().min(1).max(64), days: z.number().int().min(1).max(MAX_PLAN_DAYS) }),
  z.object({ action: z.literal('end_plan') }),
]);

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  const detail = serializeDetail(await accountDetail(params.id));
  return json({ ...detail, plan: serializePlanStatus(await planStatus(params.id), getConfig()) });
});

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, action);
  switch (body.action) {
    case 'set_tier':
      return json(serializeAccount(await adminSetTier(actor, params.id, body.tier, body.pinned)));
    case 'set_status':
      return json(serializeAccount(await adminSetStatus(actor, params.id, body.status)));
    case 'set_region':
      return json(serializeAccount(await adminSetRegion(actor, params.id, body.region)));
    case 'set_limits':
      return json(serializeAccount(await adminSetLimits(actor, params.id, body.limits)));
    case 'grant_plan': {
      await accountDetail(params.id); // a 404 for an unknown account
      planOrThrow(body.plan, 'plan', { offered: true });
      await grantPlan(params.id, body.plan, body.days, 'operator', { actor });
      return json({ plan: serializePlanStatus(await planStatus(params.id), getConfig()) });
    }
    case 'end_plan':
      await endPlan(params.id, 'now', actor);
      return json({ plan: null });
    case 'set_role': {
      const user = await setRole(actor, params.id, body.role);
      return json({ id: user.id, role: user.role });
    }
    case 'adjust_balance': {
      const credit = await adminAdjustBalance(actor, params.id, body.amount_usd, body.note);
      return json({ balance_usd: formatPico(credit.balance), ledger_entry_id: credit.entryId.toString(), live: credit.live ? 'applied' : 'pending' });
    }
  }
});

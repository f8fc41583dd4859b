// GET /api/admin/accounts/:id - an account with its keys, recent requests and ledger
// POST /api/admin/accounts/:id - one operator action: set_tier, set_status, adjust_balance, set_limits, set_role, set_region, grant_plan, end_plan
import { apiRoute, json } from '@/lib/http/api';
import { getConfig } from '@/lib/config';
import { endPlan, grantPlan, planOrThrow, planStatus } from '@/lib/plans/subscriptions';
import { serializePlanStatus } from '@/lib/plans/serialize';
import { requireAdmin } from '@/lib/admin/guard';
import { accountDetail, adminAdjustBalance, adminSetLimits, adminSetRegion, adminSetStatus, adminSetTier } from '@/lib/admin/accounts';
import { setRole } from '@/lib/admin/roles';
import { readBody } from '@/lib/http/validate';
import { adminAccounts } from '@/lib/schemas/admin/accounts';
import { serializeAccount, serializeDetail } from '@/lib/admin/serialize';
import { formatPico } from '@/lib/money';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  await requireAdmin(req);
  const detail = serializeDetail(await accountDetail(params.id));
  return json({ ...detail, plan: serializePlanStatus(await planStatus(params.id), getConfig()) });
});

export const POST = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const actor = await requireAdmin(req);
  const body = await readBody(req, adminAccounts.act);
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

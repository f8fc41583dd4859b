// GET /api/orgs/:id/usage?from=YYYY-MM-DD&to=YYYY-MM-DD - spend by member over those UTC days
// (default: this month); owner, admin, billing
import { apiRoute, json } from '@/lib/http/api';
import { usageByMember } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';
import { GatewayError } from '@/lib/errors';

function day(value: string | null, fallback: Date, param: string): Date {
  if (value === null) return fallback;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new GatewayError('invalid_request', `${param} must be a date (YYYY-MM-DD).`, { param });
  }
  return new Date(`${value}T00:00:00Z`);
}

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  const q = new URL(req.url).searchParams;
  const now = new Date();
  const from = day(q.get('from'), new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), 'from');
  const to = day(q.get('to'), now, 'to');
  return json({ from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10), by_member: await usageByMember(params.id, person, from, to) });
});

// GET /api/orgs/:id/audit - the organization's audit trail (owner, admin), newest first
import { apiRoute, json } from '@/lib/http/api';
import { orgAudit } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => json({ data: await orgAudit(params.id, await requirePerson(req)) }));

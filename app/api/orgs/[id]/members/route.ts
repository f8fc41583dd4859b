// GET /api/orgs/:id/members - members with role, monthly budget and spend this month (any member)
import { apiRoute, json } from '@/lib/http/api';
import { listMembers } from '@/lib/orgs/queries';
import { requirePerson } from '@/lib/http/orgs';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => json({ data: await listMembers(params.id, await requirePerson(req)) }));

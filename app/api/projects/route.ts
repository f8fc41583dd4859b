// GET /api/projects - the account's projects with their budget, allowlist, keys and spend this month
// (every role); POST /api/projects {name, monthly_budget_usd?, models?} - create one (owner, admin).
import { apiRoute, json, requireActor } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { projects } from '@/lib/schemas/projects';
import { createProject, listProjects } from '@/lib/keys/projects';
import { getAccount } from '@/lib/dashboard/queries';

export const GET = apiRoute(async (req) => {
  const acting = await requireActor(req);
  return json({ data: await listProjects(acting.accountId) });
});

export const POST = apiRoute(async (req) => {
  const acting = await requireActor(req);
  const person = await getAccount(acting.personId);
  return json(
    await createProject(acting.accountId, { id: acting.personId, label: person?.email ?? acting.personId }, await readBody(req, projects.create)),
    201,
  );
});

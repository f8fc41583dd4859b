// PATCH /api/projects/:id {name?, monthly_budget_usd?, models?} - edit; DELETE - delete (its keys
// leave the project). Owner, admin. Another account's project is 404.
import { apiRoute, json, requireActor } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { projects } from '@/lib/schemas/projects';
import { deleteProject, updateProject } from '@/lib/keys/projects';
import { getAccount } from '@/lib/dashboard/queries';

async function actor(req: Request) {
  const acting = await requireActor(req);
  const person = await getAccount(acting.personId);
  return { acting, actor: { id: acting.personId, label: person?.email ?? acting.personId } };
}

export const PATCH = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const { acting, actor: who } = await actor(req);
  return json(await updateProject(acting.accountId, who, params.id, await readBody(req, projects.update)));
});

export const DELETE = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const { acting, actor: who } = await actor(req);
  return json(await deleteProject(acting.accountId, who, params.id));
});

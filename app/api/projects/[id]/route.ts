// PATCH /api/projects/:id {name?, monthly_budget_usd?, models?} - edit; DELETE - delete (its keys
// leave the project). Owner, admin. Another account's project is 404.
import { apiRoute, json, readJson, requireActor } from '@/lib/http/api';
import { deleteProject, updateProject } from '@/lib/keys/projects';
import { getAccount } from '@/lib/dashboard/queries';

async function actor(req: Request) {
  const acting = await requireActor(req);
  const person = await getAccount(acting.personId);
  return { acting, actor: { id: acting.personId, label: person?.email ?? acting.personId } };
}

export const PATCH = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const { acting, actor: who } = await actor(req);
  return json(await updateProject(acting.accountId, who, params.id, await readJson(req)));
});

export const DELETE = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const { acting, actor: who } = await actor(req);
  return json(await deleteProject(acting.accountId, who, params.id));
});

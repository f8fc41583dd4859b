import { z } from 'zod';
import { coded, idParam, route } from './route';
import { keyControls } from './keys';

// Projects of an account: a budget and a model allowlist its keys share (docs/decisions/056).
// Their fields are checked as a key's are (lib/projects/queries.ts, the same words).

export const projectBody = z.object({
  name: coded(z.string().trim().min(1).max(64), 'field.name'),
  monthly_budget_usd: keyControls.shape.monthly_budget_usd,
  models: keyControls.shape.models,
});
export const projectUpdate = projectBody.partial();

export const projects = {
  list: route({ method: 'GET', path: '/api/projects', auth: 'session', summary: "The account's projects with budget, allowlist, keys and spend this month" }),
  create: route({ method: 'POST', path: '/api/projects', auth: 'session', summary: 'Create a project (owner, admin)', body: projectBody, status: 201 }),
  update: route({
    method: 'PATCH',
    path: '/api/projects/{id}',
    auth: 'session',
    summary: 'Edit a project (owner, admin)',
    params: idParam,
    body: projectUpdate,
  }),
  delete: route({ method: 'DELETE', path: '/api/projects/{id}', auth: 'session', summary: 'Delete a project (its keys leave it)', params: idParam }),
};

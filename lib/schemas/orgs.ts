import { z } from 'zod';
import { coded, idParam, route } from './route';

// Organizations, their members and usage (docs/decisions/040). Who may do what is lib/orgs/roles.ts;
// the shapes are here, in the words lib/orgs/queries.ts used before.

const name = coded(z.string().trim().min(1).max(80), 'org.name_invalid').meta({ description: '1 to 80 characters' });
const role = coded(z.enum(['owner', 'admin', 'developer', 'billing']), 'org.role_invalid');
const memberParams = idParam.extend({ userId: z.string().max(64) });

export const orgCreate = z.object({ name });
export const orgRename = z.object({ name });
export const orgSelect = z.object({
  id: z.string().max(64).nullable().optional().meta({ description: "an organization's id; null or the person's own id: the personal account" }),
});
export const memberUpdate = z.object({
  role: role.optional(),
  monthly_budget_usd: coded(z.union([z.number().nonnegative(), z.string().max(40)]).nullable(), 'org.budget_invalid')
    .optional()
    .meta({ description: "USD a month the member's keys may spend; null: no budget" }),
});
/** Most SSO-required email domains of an organization (lib/orgs/sso.ts). */
export const MAX_SSO_DOMAINS = 20;
export const ssoDomains = z.object({
  domains: coded(z.array(z.string().max(253)).max(MAX_SSO_DOMAINS), 'org.sso_domains_invalid', { max: MAX_SSO_DOMAINS }).meta({
    description: 'email domains (example.com) whose people must sign in through SSO; each proven by an SSO sign-in at it',
  }),
});

export const transfer = z.object({ user_id: z.string().min(1).max(64).meta({ description: 'the member who becomes the owner' }) });

export const orgs = {
  list: route({
    method: 'GET',
    path: '/api/orgs',
    auth: 'session',
    summary: "The person's organizations (their personal account first) and which is selected",
  }),
  create: route({
    method: 'POST',
    path: '/api/orgs',
    auth: 'session',
    summary: 'Create an organization (the creator is its owner; it is selected)',
    body: orgCreate,
    status: 201,
  }),
  select: route({
    method: 'POST',
    path: '/api/orgs/select',
    auth: 'session',
    summary: 'The organization the dashboard and /api act on from now',
    body: orgSelect,
  }),
  get: route({ method: 'GET', path: '/api/orgs/{id}', auth: 'session', summary: "The organization and the caller's role", params: idParam }),
  rename: route({ method: 'PATCH', path: '/api/orgs/{id}', auth: 'session', summary: 'Rename (owner, admin)', params: idParam, body: orgRename }),
  delete: route({
    method: 'DELETE',
    path: '/api/orgs/{id}',
    auth: 'session',
    summary: 'Delete it (owner): every key revoked, the account closed, its ledger kept',
    params: idParam,
  }),
  audit: route({ method: 'GET', path: '/api/orgs/{id}/audit', auth: 'session', summary: "The organization's audit trail (owner, admin)", params: idParam }),
  members: route({
    method: 'GET',
    path: '/api/orgs/{id}/members',
    auth: 'session',
    summary: 'Members with role, monthly budget and spend this month',
    params: idParam,
  }),
  updateMember: route({
    method: 'PATCH',
    path: '/api/orgs/{id}/members/{userId}',
    auth: 'session',
    summary: "A member's role or monthly budget (owner, admin)",
    params: memberParams,
    body: memberUpdate,
  }),
  removeMember: route({
    method: 'DELETE',
    path: '/api/orgs/{id}/members/{userId}',
    auth: 'session',
    summary: 'Remove a member (or leave): their keys are revoked at once',
    params: memberParams,
  }),
  transfer: route({
    method: 'POST',
    path: '/api/orgs/{id}/transfer',
    auth: 'session',
    summary: 'The owner makes another member the owner',
    params: idParam,
    body: transfer,
  }),
  sso: route({
    method: 'GET',
    path: '/api/orgs/{id}/sso',
    auth: 'session',
    summary: 'The email domains that must sign in through SSO (owner, admin)',
    params: idParam,
  }),
  setSso: route({
    method: 'PUT',
    path: '/api/orgs/{id}/sso',
    auth: 'session',
    summary: 'Replace the SSO-required domains (owner, admin; 409 when another organization has one)',
    params: idParam,
    body: ssoDomains,
  }),
  usage: route({
    method: 'GET',
    path: '/api/orgs/{id}/usage',
    auth: 'session',
    summary: 'Spend by member over UTC days (owner, admin, billing)',
    params: idParam,
    query: z.object({
      from: z.string().max(40).optional().meta({ description: 'YYYY-MM-DD (this month by default)' }),
      to: z.string().max(40).optional().meta({ description: 'YYYY-MM-DD' }),
    }),
  }),
};

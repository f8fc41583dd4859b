// GET /api/orgs/:id/sso - the email domains whose people must sign in through SSO (owner, admin);
// PUT {domains: ["example.com", ...]} - replace them (409 when another organization has one).
import { apiRoute, json } from '@/lib/http/api';
import { readBody } from '@/lib/http/validate';
import { orgs } from '@/lib/schemas/orgs';
import { requirePerson } from '@/lib/http/orgs';
import { getSsoDomains, setSsoDomains } from '@/lib/orgs/sso';

export const GET = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await getSsoDomains(params.id, person));
});

export const PUT = apiRoute<{ id: string }>(async (req, _ctx, params) => {
  const person = await requirePerson(req);
  return json(await setSsoDomains(params.id, person, await readBody(req, orgs.setSso)));
});

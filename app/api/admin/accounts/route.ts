// GET /api/admin/accounts?q= - search accounts by email (substring) or id
import { apiRoute, json } from '@/lib/http/api';
import { requireAdmin } from '@/lib/admin/guard';
import { searchAccounts } from '@/lib/admin/accounts';
import { serializeAccount } from '@/lib/admin/serialize';
import { readQuery } from '@/lib/http/validate';
import { adminAccounts } from '@/lib/schemas/admin/accounts';

export const GET = apiRoute(async (req) => {
  await requireAdmin(req);
  const q = readQuery(req, adminAccounts.search).q ?? '';
  return json({ data: (await searchAccounts(q)).map(serializeAccount) });
});

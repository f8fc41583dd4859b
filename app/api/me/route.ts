// GET /api/me - the signed-in account
import { apiRoute, json, requireUserId } from '@/lib/http/api';
import { getUser, publicUser } from '@/lib/accounts/queries';

export const GET = apiRoute(async (req) => json({ user: publicUser(await getUser(await requireUserId(req))) }));

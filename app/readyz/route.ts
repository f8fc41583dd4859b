// GET /readyz - readiness (database reachable)
import { readyz } from '@/lib/ops';

export const dynamic = 'force-dynamic';
export const GET = async () => {
  const r = await readyz();
  return new Response(r.body, { status: r.status, headers: { 'content-type': r.contentType } });
};

// GET /healthz - liveness
import { healthz } from '@/lib/ops';

export const dynamic = 'force-dynamic';
export const GET = () => {
  const r = healthz();
  return new Response(r.body, { status: r.status, headers: { 'content-type': r.contentType } });
};

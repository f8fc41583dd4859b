// GET /metrics - Prometheus text, operator token required
import { metrics } from '@/lib/ops';

export const dynamic = 'force-dynamic';
export const GET = async (req: Request) => {
  const r = await metrics(req.headers.get('authorization') ?? undefined, { gc: new URL(req.url).searchParams.get('gc') === '1' });
  return new Response(r.body, { status: r.status, headers: { 'content-type': r.contentType } });
};

// /v1/batches (lib/gateway/jobs/routes.ts): the route-handler path of the same handler as the lean server's
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const GET = (req: Request) => handleWebRequest(req);
export const POST = (req: Request) => handleWebRequest(req);

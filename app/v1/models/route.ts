// GET /v1/models - served by the framework-free gateway pipeline (lib/gateway)
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const GET = (req: Request) => handleWebRequest(req);

// GET /v1/responses/{id} - a stored response; DELETE /v1/responses/{id} - delete it (lib/gateway)
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const GET = (req: Request) => handleWebRequest(req);
export const DELETE = (req: Request) => handleWebRequest(req);

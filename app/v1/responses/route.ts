// POST /v1/responses - the OpenAI Responses API, served by the gateway pipeline (lib/gateway)
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const POST = (req: Request) => handleWebRequest(req);

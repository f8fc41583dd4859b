// POST /v1/chat/completions - served by the framework-free gateway pipeline (lib/gateway)
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const POST = (req: Request) => handleWebRequest(req);

// POST /v1/anthropic/v1/messages(/count_tokens), GET /v1/anthropic/v1/models - the Anthropic mirror
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const GET = (req: Request) => handleWebRequest(req);
export const POST = (req: Request) => handleWebRequest(req);

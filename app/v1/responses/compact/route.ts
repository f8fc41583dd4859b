// POST /v1/responses/compact - a conversation compacted (Codex's remote compaction), served by the gateway pipeline (lib/gateway)
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const POST = (req: Request) => handleWebRequest(req);

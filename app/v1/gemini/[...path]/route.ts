// /v1/gemini/{v1beta|v1}/models[/{model}[:generateContent|:streamGenerateContent|:countTokens]] - the Gemini API surface
import { handleWebRequest } from '@/lib/gateway/web-adapter';

export const dynamic = 'force-dynamic';
export const GET = (req: Request) => handleWebRequest(req);
export const POST = (req: Request) => handleWebRequest(req);

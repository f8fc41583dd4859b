// GET /openapi.json - the OpenAPI 3.1 document of /v1 and /api, made from the routes' schemas (lib/http/openapi.ts)
import { openApiDocument } from '@/lib/http/openapi';

export const GET = () =>
  new Response(JSON.stringify(openApiDocument()), {
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' },
  });

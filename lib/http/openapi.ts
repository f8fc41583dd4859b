import { z } from 'zod';
import { resources } from '@/lib/schemas';
import { apiError, type Auth, type RouteDef } from '@/lib/schemas/route';

// The OpenAPI 3.1 document of the whole API (/v1 and /api), made from the routes' zod schemas
// (lib/schemas) with zod's own z.toJSONSchema: OpenAPI 3.1's Schema Object is JSON Schema 2020-12,
// zod's default target, so no converter library is needed. Served at /openapi.json; built once.

type Json = Record<string, unknown>;

const toSchema = (s: z.ZodType): Json => {
  const out = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', reused: 'inline' }) as Json;
  delete out.$schema;
  delete out.id;
  return out;
};

const SECURITY: Record<Auth, Json[]> = {
  session: [{ session: [] }],
  admin: [{ session: [] }],
  key: [{ apiKey: [] }],
  stripe: [{ stripeSignature: [] }],
  none: [],
};

const errorRef = { $ref: '#/components/schemas/ApiError' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorRef } } });

function parameters(def: RouteDef): Json[] {
  const out: Json[] = [];
  for (const [where, obj] of [
    ['path', def.params],
    ['query', def.query],
  ] as const) {
    if (!obj) continue;
    for (const [name, field] of Object.entries(obj.shape as Record<string, z.ZodType>)) {
      const schema = toSchema(field);
      const required = where === 'path' || !field.safeParse(undefined).success;
      const description = typeof schema.description === 'string' ? schema.description : undefined;
      out.push({ name, in: where, required, ...(description ? { description } : {}), schema });
    }
  }
  return out;
}

function operation(tag: string, name: string, def: RouteDef): Json {
  const api = def.path.startsWith('/api/');
  const ok = String(def.status ?? 200);
  const success =
    def.response === undefined
      ? { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } }
      : Array.isArray(def.response)
        ? { description: 'OK', content: Object.fromEntries(def.response.map((t) => [t, {}])) }
        : { description: 'OK', content: { 'application/json': { schema: toSchema(def.response) } } };
  const responses: Json = { [ok]: success };
  if (api) {
    if (def.body || def.query || def.params) responses['400'] = errorResponse('Bad input: `param` names the field, `fields` every bad one');
    if (def.auth === 'session' || def.auth === 'admin') responses['401'] = errorResponse('Not signed in');
    if (def.auth === 'admin') responses['403'] = errorResponse('Not an operator');
  } else if (def.auth === 'key') {
    responses['4XX'] = { description: "An error in the surface's own envelope (OpenAI, Anthropic or Google)" };
  }
  const op: Json = {
    operationId: `${tag.replace(/\//g, '.')}.${name}`,
    summary: def.summary,
    tags: [tag],
    security: SECURITY[def.auth],
    responses,
  };
  if (def.description) op.description = def.description;
  const params = parameters(def);
  if (params.length) op.parameters = params;
  if (def.body || def.bodyTypes) {
    const schema = def.body ? toSchema(def.body) : {};
    const types = def.bodyTypes ?? ['application/json'];
    op.requestBody = {
      required: def.body ? !def.body.safeParse(undefined).success : true,
      content: Object.fromEntries(types.map((t) => [t, t === 'application/json' || t === 'multipart/form-data' ? { schema } : {}])),
    };
  }
  return op;
}

let built: Json | null = null;

/** The document (built on first use; the schemas do not change while the process runs). */
export function openApiDocument(): Json {
  if (built) return built;
  const paths: Record<string, Record<string, Json>> = {};
  for (const [tag, resource] of Object.entries(resources)) {
    for (const [name, def] of Object.entries(resource)) {
      (paths[def.path] ??= {})[def.method.toLowerCase()] = operation(tag, name, def);
    }
  }
  built = {
    openapi: '3.1.1',
    info: {
      title: 'Model Gateway API',
      version: '1',
      description:
        'The gateway (/v1: OpenAI-compatible, Anthropic at /v1/anthropic, Gemini at /v1/gemini) and the account and operator API (/api). ' +
        'Behaviour that a schema cannot say (limits, billing, errors, regions) is in docs/api.md.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/' }],
    tags: Object.keys(resources).map((name) => ({ name })),
    paths,
    components: {
      schemas: { ApiError: toSchema(apiError) },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (Anthropic: also x-api-key; Gemini: x-goog-api-key or ?key=)' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'next-auth.session-token',
          description: 'The dashboard session; mutations also need a same-site Origin',
        },
        stripeSignature: { type: 'apiKey', in: 'header', name: 'stripe-signature' },
      },
    },
  };
  return built;
}

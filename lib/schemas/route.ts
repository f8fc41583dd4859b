import { z } from 'zod';
import type { MessageCode, MessageParams } from '@/lib/i18n/codes';
import { usdToPico } from '@/lib/money';

// The shape every resource file (lib/schemas/*.ts) describes its routes with: one `route()` per
// method and path, holding the zod schemas of its path parameters, query and body. The route handler
// validates with them (lib/http/validate.ts), a dashboard form runs the same schema before it sends
// (lib/schemas/fields.ts), and lib/http/openapi.ts turns them into /openapi.json. Client-safe: zod and
// the message codes only, so a form can import a resource file.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route: a dashboard session, an operator's session, anyone, Stripe's signature, or an API key (/v1). */
export type Auth = 'session' | 'admin' | 'none' | 'stripe' | 'key';

export interface RouteDef {
  method: Method;
  /** OpenAPI path: `/api/keys/{id}` (the folder `[id]` written `{id}`). */
  path: string;
  summary: string;
  auth: Auth;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body's media type when it is not JSON (`text/csv`…); documented, read by the route itself. */
  bodyTypes?: string[];
  /** What a success answers: a JSON schema, or a media type for files (`text/csv`, `application/pdf`…). */
  response?: z.ZodType | string[];
  /** The success status (200 unless said). */
  status?: number;
  /** Extra words for the docs (OpenAPI `description`). */
  description?: string;
}

/** A resource: its routes by name (`keys.create`, `keys.update`…). */
export type Resource = Record<string, RouteDef>;

/** Declares a route, keeping its schemas' types for readBody/readQuery. */
export const route = <const D extends RouteDef>(d: D): D => d;

/**
 * Says a field's error in the app's own words (lib/i18n/codes.ts) instead of the generic ones
 * lib/schemas/fields.ts derives from zod's issue: the key and alert forms had them before the schemas.
 */
export function coded<T extends z.ZodType>(schema: T, code: MessageCode, params?: MessageParams): T {
  return schema.meta({ 'x-message-code': code, ...(params ? { 'x-message-params': params } : {}) }) as T;
}

// Shared pieces.

/** A path parameter that is an id (a UUID or a prefixed id). */
export const idParam = z.object({ id: z.string().min(1).max(128) });

/** A USD amount as JSON number or decimal text ("20", "12.50"), at most 12 decimals; exact (never a float) once parsed. */
export const usdText = z
  .union([z.number(), z.string().max(40)])
  .refine((v) => /^-?\d+(\.\d+)?$/.test(typeof v === 'number' ? String(v) : v.trim()), { message: 'must be a decimal amount in USD' })
  .meta({ description: 'USD as a JSON number or a decimal string such as "12.50" (at most 12 decimals)', examples: ['12.50'] });

const decimal = /^-?\d{1,9}(\.\d{1,12})?$/;

/** A signed USD amount (number or decimal text, at most 12 decimals), to pico-USD: the console's credits and codes. */
export const usdAmount = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    if (!decimal.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'must be a decimal amount in USD with at most 12 decimals' });
      return z.NEVER;
    }
    return usdToPico(text.startsWith('-') ? text.slice(1) : text) * (text.startsWith('-') ? -1n : 1n);
  })
  .meta({ description: 'USD as a JSON number or decimal string, at most 12 decimals', examples: ['-2.50'] });

/** A region's name (cn, eu, us…): the gateway's REGION_PATTERN (lib/gateway/region.ts; a unit test keeps them one). */
export const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** A page size (`limit`) of a list. */
export const limitQuery = coded(z.string().max(16), 'filter.limit', { max: 200 }).optional().meta({ description: 'page size, 1 to 200 (50 by default)' });

/** An opaque cursor of a previous page. */
export const cursorQuery = (name: string) => coded(z.string().max(512), 'filter.cursor', { name }).optional();

/** A day (YYYY-MM-DD) or ISO timestamp bound of a range. */
export const boundQuery = (name: 'from' | 'to') =>
  coded(z.string().max(40), 'filter.bound', { name }).optional().meta({ description: 'a day (YYYY-MM-DD, read in `tz`) or an ISO-8601 timestamp' });

/** Any JSON object (a body the route reads itself). */
export const anyObject = z.looseObject({});

/** The account API's error envelope (lib/errors.ts apiErrorBody). */
export const apiError = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'invalid_request, not_found, unauthenticated, forbidden, conflict, rate_limit_exceeded…' }),
      message: z.string().meta({ description: 'English text' }),
      param: z.string().optional().meta({ description: 'the offending field of a 400' }),
      message_code: z.string().optional().meta({ description: "the message in lib/i18n/codes.ts, to say it in the reader's language" }),
      params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
      fields: z
        .array(
          z.object({
            field: z.string(),
            message: z.string(),
            message_code: z.string(),
            params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
          }),
        )
        .optional()
        .meta({ description: 'every bad field of the body' }),
    }),
  })
  .meta({ title: 'ApiError' });

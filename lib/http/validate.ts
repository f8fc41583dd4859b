import type { z } from 'zod';
import { englishMessage } from '@/lib/i18n/codes';
import { GatewayError } from '@/lib/errors';
import { readJson } from '@/lib/http/api';
import { fieldErrorsOf } from '@/lib/schemas/fields';
import type { RouteDef } from '@/lib/schemas/route';

// A route's input checked against its schema (lib/schemas): a mismatch is a 400 in the account
// API envelope naming the field (`param`), with every bad field in `fields` and message codes the
// pages say in the reader's language. Never a 500: readJson refuses what is not a JSON object first.

type Schema = z.ZodType;
type BodyOf<D> = D extends { body: infer S extends Schema } ? z.output<S> : never;
type QueryOf<D> = D extends { query: infer S extends Schema } ? z.output<S> : never;

/** The 400 of a failed parse: `message` and `param` are the first bad field's, `fields` all of them. */
export function invalidInput(schema: Schema, issues: readonly z.core.$ZodIssue[]): GatewayError {
  const fields = fieldErrorsOf(schema, issues);
  const first = fields[0];
  // Codes of their own (the key form's words) do not name the field: the API text does.
  const english = englishMessage(first.message_code, first.params);
  const message = first.params && 'field' in first.params ? english : `"${first.field}": ${english}`;
  return new GatewayError('invalid_request', message, { param: first.field, messageCode: first.message_code, params: first.params ?? {}, fields });
}

/** Parses `value` with `schema` or throws the 400. */
export function parseWith<S extends Schema>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput(schema, parsed.error.issues);
  return parsed.data;
}

/** The JSON body of a request, checked against the route's (or a) schema. */
export async function readBody<D extends RouteDef & { body: Schema }>(req: Request, def: D): Promise<BodyOf<D>>;
export async function readBody<S extends Schema>(req: Request, schema: S): Promise<z.output<S>>;
export async function readBody(req: Request, defOrSchema: RouteDef | Schema): Promise<unknown> {
  const schema = 'method' in defOrSchema ? (defOrSchema as RouteDef).body! : (defOrSchema as Schema);
  return parseWith(schema, await readJson(req));
}

/** The query string of a request, checked against the route's query schema (each parameter's first value). */
export function readQuery<D extends RouteDef & { query: Schema }>(req: Request, def: D): QueryOf<D> {
  const params = new URL(req.url).searchParams;
  const value: Record<string, string> = {};
  for (const [k, v] of params) if (!(k in value)) value[k] = v;
  return parseWith(def.query, value) as QueryOf<D>;
}

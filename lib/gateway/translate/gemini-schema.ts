// JSON Schema (as OpenAI clients write it for tools and response_format) -> the OpenAPI subset
// Gemini's `Schema` accepts. Gemini answers 400 to keys outside that subset (additionalProperties,
// $schema, $ref, const, unknown formats...), so the schema is rewritten: references inlined,
// type unions turned into nullable/anyOf, const into enum, everything else dropped.
import { isObject } from '@/lib/gateway/translate/wire/json';
import { GatewayError } from '@/lib/errors';
import type { JsonObject } from '@/lib/gateway/translate/types';

/** Keys copied as they are (their values need no rewriting). */
const PLAIN_KEYS = [
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'default',
  'minimum',
  'maximum',
  'propertyOrdering',
] as const;

/** Formats Gemini knows, per type; any other is dropped (e.g. "uri", "email"). */
const FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
};

/** References deeper than this (a recursive schema) end as a bare object. */
const MAX_REF_DEPTH = 8;

/**
 * Inlining references multiplies: a 507-byte schema whose definition refers to itself ten times
 * expands to 10^8 nodes (minutes of CPU, gigabytes, then the process dies). The depth cut-off
 * alone bounds nesting, not fan-out, so the work is bounded too: every node produced (each $ref
 * expansion included) and an estimate of the bytes written are counted against one budget per
 * request, shared by all its schemas, and translation stops at the first node past it.
 * OpenAI's structured outputs allow 5,000 properties in all; 20,000 nodes leave room for that
 * with refs inlined, and cost a few milliseconds to build.
 */
export const MAX_SCHEMA_NODES = 20_000;
/** The request body cap's default: a larger schema could not go upstream anyway. */
export const MAX_SCHEMA_BYTES = 4 * 1024 * 1024;

/** What one request's schemas may still produce. */
export interface SchemaBudget {
  nodes: number;
  bytes: number;
}

export function schemaBudget(): SchemaBudget {
  return { nodes: MAX_SCHEMA_NODES, bytes: MAX_SCHEMA_BYTES };
}

/**
 * `schema` rewritten for Gemini. `field` names it in the client's request (the 400 of a schema over
 * the budget names it); `budget` is shared by the request's schemas.
 */
export function geminiSchema(schema: JsonObject, field = 'schema', budget: SchemaBudget = schemaBudget()): JsonObject {
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  return convert(schema, { defs, budget, field }, 0);
}

interface Walk {
  defs: JsonObject;
  budget: SchemaBudget;
  field: string;
}

/** Charges one node (and the bytes of what it copies) to the budget; past it, the request's 400. */
function charge(walk: Walk, bytes: number, nodes = 1): void {
  const b = walk.budget;
  b.nodes -= nodes;
  b.bytes -= bytes;
  if (b.nodes >= 0 && b.bytes >= 0) return;
  throw new GatewayError(
    'invalid_request',
    `\`${walk.field}\` is too large for this model once its references are inlined (Gemini takes no $ref): ` +
      `more than ${b.nodes < 0 ? `${MAX_SCHEMA_NODES} schema nodes` : `${MAX_SCHEMA_BYTES} bytes`} for the request's schemas. ` +
      'Reduce how many times its definitions refer to themselves or to each other.',
    { param: walk.field },
  );
}

/** The bytes a copied value adds to the serialised schema, roughly (strings dominate). */
function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (Array.isArray(v)) {
    let n = 2;
    for (const x of v) n += typeof x === 'string' ? x.length + 3 : typeof x === 'object' && x !== null ? JSON.stringify(x).length + 1 : 8;
    return n;
  }
  if (typeof v === 'object' && v !== null) return JSON.stringify(v).length;
  return 8;
}

function resolveRef(ref: string, defs: JsonObject): JsonObject | undefined {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  let name: string | undefined;
  try {
    name = match ? decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
  } catch {
    return undefined; // a malformed %-escape names nothing
  }
  const target = name === undefined ? undefined : defs[name];
  return isObject(target) ? target : undefined;
}

function convert(schema: JsonObject, walk: Walk, depth: number): JsonObject {
  charge(walk, 16);
  if (depth > MAX_REF_DEPTH) return { type: 'object' };
  const defs = walk.defs;
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, defs);
    if (!target) return { type: 'object', ...(typeof schema.description === 'string' ? { description: schema.description } : {}) };
    // Siblings of $ref (a description, say) win over the referenced schema's.
    const { $ref: _ref, ...siblings } = schema;
    return convert({ ...target, ...siblings }, walk, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    // Merged into one schema: properties and required lists joined.
    const { allOf, ...rest } = schema;
    let merged: JsonObject = rest;
    for (const part of allOf) {
      if (!isObject(part)) continue;
      const resolved = typeof part.$ref === 'string' ? (resolveRef(part.$ref, defs) ?? {}) : part;
      // Each merge copies the properties gathered so far: charged as nodes, or a long allOf of
      // references to a wide definition would be quadratic.
      const gathered =
        (isObject(merged.properties) ? Object.keys(merged.properties).length : 0) + (Array.isArray(merged.required) ? merged.required.length : 0);
      charge(walk, 0, 1 + gathered);
      merged = {
        ...resolved,
        ...merged,
        properties: { ...(isObject(resolved.properties) ? resolved.properties : {}), ...(isObject(merged.properties) ? merged.properties : {}) },
        required: [...(Array.isArray(resolved.required) ? resolved.required : []), ...(Array.isArray(merged.required) ? merged.required : [])],
      };
    }
    return convert(merged, walk, depth + 1);
  }

  const out: JsonObject = {};
  let copied = 0;
  for (const key of PLAIN_KEYS) {
    if (schema[key] === undefined) continue;
    out[key] = schema[key];
    copied += key.length + 3 + sizeOf(schema[key]);
  }
  if (copied > 0) charge(walk, copied);
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const];

  let type = schema.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null');
    if (types.length < type.length) out.nullable = true;
    if (types.length === 1) type = types[0];
    else {
      // Several types: one branch per type, the rest of the schema repeated in each.
      const { type: _t, ...rest } = schema;
      const branches = types.map((t) => convert({ ...rest, type: t }, walk, depth));
      return { anyOf: branches, ...(out.nullable ? { nullable: true } : {}) };
    }
  }
  if (typeof type === 'string' && type !== 'null') out.type = type;
  if (type === 'null') out.nullable = true;

  if (typeof schema.format === 'string' && typeof type === 'string' && FORMATS[type]?.has(schema.format)) out.format = schema.format;
  if (out.enum !== undefined && !Array.isArray(out.enum)) delete out.enum;
  if (Array.isArray(out.enum) && out.type !== undefined && out.type !== 'string') {
    // Gemini takes enum on strings only: for other types the values move into the description,
    // so the arguments keep their type.
    const allowed = `Allowed values: ${out.enum.map((v) => JSON.stringify(v)).join(', ')}.`;
    out.description = typeof out.description === 'string' && out.description !== '' ? `${out.description} ${allowed}` : allowed;
    delete out.enum;
  } else if (Array.isArray(out.enum)) {
    out.enum = out.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    out.type ??= 'string';
  }

  if (isObject(schema.properties)) {
    const properties: JsonObject = {};
    for (const [name, value] of Object.entries(schema.properties)) {
      if (!isObject(value)) continue;
      charge(walk, name.length + 3);
      properties[name] = convert(value, walk, depth);
    }
    // An object with no properties is written without the key: Gemini refuses an empty map.
    if (Object.keys(properties).length > 0) {
      out.properties = properties;
      if (Array.isArray(schema.required)) {
        const required = [...new Set(schema.required.filter((r): r is string => typeof r === 'string' && r in properties))];
        if (required.length > 0) out.required = required;
      }
    }
  }
  if (isObject(schema.items)) out.items = convert(schema.items, walk, depth);
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) {
    const branches = union.filter(isObject);
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length < branches.length) out.nullable = true;
    if (nonNull.length === 1 && out.type === undefined) {
      // `anyOf: [X, {type: null}]` (how pydantic writes Optional[X]) is X, nullable.
      return { ...convert(nonNull[0], walk, depth), ...out, ...(out.nullable ? { nullable: true } : {}) };
    }
    if (nonNull.length > 0) out.anyOf = nonNull.map((b) => convert(b, walk, depth));
  }
  return out;
}

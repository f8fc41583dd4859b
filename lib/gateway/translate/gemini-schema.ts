// JSON Schema (as OpenAI clients write it for tools and response_format) -> the OpenAPI subset
// Gemini's `Schema` accepts. Gemini answers 400 to keys outside that subset (additionalProperties,
// $schema, $ref, const, unknown formats...), so the schema is rewritten: references inlined,
// type unions turned into nullable/anyOf, const into enum, everything else dropped.
import type { JsonObject } from '@/lib/gateway/translate/types';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

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

export function geminiSchema(schema: JsonObject): JsonObject {
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  return convert(schema, defs, 0);
}

function resolveRef(ref: string, defs: JsonObject): JsonObject | undefined {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  const target = match ? defs[decodeURIComponent(match[1]).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObject(target) ? target : undefined;
}

function convert(schema: JsonObject, defs: JsonObject, depth: number): JsonObject {
  if (depth > MAX_REF_DEPTH) return { type: 'object' };
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, defs);
    if (!target) return { type: 'object', ...(typeof schema.description === 'string' ? { description: schema.description } : {}) };
    // Siblings of $ref (a description, say) win over the referenced schema's.
    const { $ref: _ref, ...siblings } = schema;
    return convert({ ...target, ...siblings }, defs, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    // Merged into one schema: properties and required lists joined.
    const { allOf, ...rest } = schema;
    let merged: JsonObject = rest;
    for (const part of allOf) {
      if (!isObject(part)) continue;
      const resolved = typeof part.$ref === 'string' ? (resolveRef(part.$ref, defs) ?? {}) : part;
      merged = {
        ...resolved,
        ...merged,
        properties: { ...(isObject(resolved.properties) ? resolved.properties : {}), ...(isObject(merged.properties) ? merged.properties : {}) },
        required: [...(Array.isArray(resolved.required) ? resolved.required : []), ...(Array.isArray(merged.required) ? merged.required : [])],
      };
    }
    return convert(merged, defs, depth + 1);
  }

  const out: JsonObject = {};
  for (const key of PLAIN_KEYS) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const];

  let type = schema.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null');
    if (types.length < type.length) out.nullable = true;
    if (types.length === 1) type = types[0];
    else {
      // Several types: one branch per type, the rest of the schema repeated in each.
      const { type: _t, ...rest } = schema;
      const branches = types.map((t) => convert({ ...rest, type: t }, defs, depth));
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
    for (const [name, value] of Object.entries(schema.properties)) if (isObject(value)) properties[name] = convert(value, defs, depth);
    // An object with no properties is written without the key: Gemini refuses an empty map.
    if (Object.keys(properties).length > 0) {
      out.properties = properties;
      if (Array.isArray(schema.required)) {
        const required = [...new Set(schema.required.filter((r): r is string => typeof r === 'string' && r in properties))];
        if (required.length > 0) out.required = required;
      }
    }
  }
  if (isObject(schema.items)) out.items = convert(schema.items, defs, depth);
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) {
    const branches = union.filter(isObject);
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length < branches.length) out.nullable = true;
    if (nonNull.length === 1 && out.type === undefined) {
      // `anyOf: [X, {type: null}]` (how pydantic writes Optional[X]) is X, nullable.
      return { ...convert(nonNull[0], defs, depth), ...out, ...(out.nullable ? { nullable: true } : {}) };
    }
    if (nonNull.length > 0) out.anyOf = nonNull.map((b) => convert(b, defs, depth));
  }
  return out;
}

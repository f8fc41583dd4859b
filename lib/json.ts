// A JSON object as parsed, and the one test that a value is one. It sits on the base floor so that
// modules below the gateway (lib/region.ts) and the gateway's wire readers share a single definition.
/** A JSON object as parsed (nothing about its fields checked yet). */
export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

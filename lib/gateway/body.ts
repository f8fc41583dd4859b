import { GatewayError } from '@/lib/errors';
import type { GatewayRequest } from '@/lib/gateway/types';

export type JsonObject = Record<string, unknown>;

/** Reads and parses the body once; the raw bytes are kept for verbatim forwarding. */
export async function readJsonBody(req: GatewayRequest, maxBytes: number): Promise<{ raw: Buffer; json: JsonObject }> {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw new GatewayError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  }
  const raw = await req.readBody(maxBytes);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  // JSON.parse takes any depth, but JSON.stringify (re-serialising for the upstream) recurses and
  // overflows the stack at a few thousand levels: refuse absurd nesting up front.
  if (nestingExceeds(raw, MAX_JSON_DEPTH)) {
    throw new GatewayError('invalid_request', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return { raw, json: json as JsonObject };
}

/** Deepest object/array nesting accepted in a request body (JSON schemas of tools stay far below). */
export const MAX_JSON_DEPTH = 128;

/** True when valid JSON bytes nest objects/arrays deeper than max (UTF-8 continuation bytes are never ASCII). */
function nestingExceeds(raw: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const bad = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

export function optionalNumber(body: JsonObject, field: string, min: number, max: number): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw bad(field, `"${field}" must be a number from ${min} to ${max}.`);
  return v;
}

export function optionalInt(body: JsonObject, field: string, min: number): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) throw bad(field, `"${field}" must be an integer of at least ${min}.`);
  return v;
}

export function optionalBoolean(body: JsonObject, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(field, `"${field}" must be true or false.`);
  return v;
}

export function optionalObject(body: JsonObject, field: string): JsonObject | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(field, `"${field}" must be an object.`);
  return v as JsonObject;
}

export { bad as invalidField };

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
  return { raw, json: json as JsonObject };
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

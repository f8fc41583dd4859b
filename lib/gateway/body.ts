import { isUtf8 } from 'node:buffer';
import { isObject, type JsonObject } from '@/lib/gateway/translate/wire/json';
import { GatewayError } from '@/lib/errors';
import type { GatewayRequest } from '@/lib/gateway/types';

export type { JsonObject };

/** A request body: its bytes, parsed once, and whether the bytes may go upstream as they are. */
export interface JsonBody {
  raw: Buffer;
  /** `raw` decoded (what JSON.parse read). */
  text: string;
  json: JsonObject;
  /**
   * The raw bytes mean exactly what `json` says at the top level: no top-level key appears twice.
   * With a duplicate ("model" twice, say) JSON.parse keeps the last one, while an upstream's parser
   * may keep the first, so the request would be priced for one model and served by another; such
   * a body is re-serialised from `json` instead of forwarded verbatim. So is one that is not valid
   * UTF-8 (what was parsed is its decoding, with U+FFFD for the invalid bytes).
   */
  verbatim: boolean;
}

/** Reads and parses the body once; the raw bytes are kept for verbatim forwarding. */
export async function readJsonBody(req: GatewayRequest, maxBytes: number): Promise<JsonBody> {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw new GatewayError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  }
  const raw = await req.readBody(maxBytes);
  const text = raw.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  if (!isObject(json)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  // JSON.parse takes any depth, but JSON.stringify (re-serialising for the upstream) recurses and
  // overflows the stack at a few thousand levels: refuse absurd nesting up front.
  const shape = scanJson(raw, MAX_JSON_DEPTH);
  if (shape.topLevelKeys < 0) {
    throw new GatewayError('invalid_request', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  // Invalid UTF-8 decodes to U+FFFD: the bytes would not mean what was parsed (and validated) either.
  return { raw, text, json, verbatim: shape.topLevelKeys === Object.keys(json).length && isUtf8(raw) };
}

/** Deepest object/array nesting accepted in a request body (JSON schemas of tools stay far below). */
export const MAX_JSON_DEPTH = 128;

/**
 * One pass over the structure of a JSON object that JSON.parse has accepted: the number of keys
 * written at its top level (duplicates included), or -1 when it nests deeper than maxDepth.
 * String contents, the bulk of a chat body, are skipped with Buffer#indexOf (native) rather than
 * walked byte by byte: about 15x faster on a 64 KB conversation. UTF-8 continuation bytes are
 * never ASCII, so byte comparisons are exact.
 */
export function scanJson(raw: Buffer, maxDepth: number): { topLevelKeys: number } {
  let depth = 0;
  let keys = 0;
  let expectKey = false;
  const n = raw.length;
  for (let i = 0; i < n; i++) {
    const c = raw[i];
    if (c === 0x22) {
      // The closing quote is the next one not escaped, i.e. preceded by an even run of backslashes.
      let j = raw.indexOf(0x22, i + 1);
      for (;;) {
        if (j === -1) return { topLevelKeys: keys }; // unreachable for valid JSON
        let k = j - 1;
        while (raw[k] === 0x5c) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = raw.indexOf(0x22, j + 1);
      }
      if (expectKey) {
        keys++;
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { topLevelKeys: -1 };
      if (depth === 1) expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && depth === 1) expectKey = true;
  }
  return { topLevelKeys: keys };
}

/** Bodies up to this size are spliced as text (two string slices, no buffers); larger ones as bytes (no re-encoding). */
const SPLICE_AS_TEXT_BYTES = 16 * 1024;

/**
 * The body for the upstream, with `members` set (undefined: removed): the client's own bytes when
 * nothing changes, the bytes with the new members spliced in before the closing brace when only
 * members the body lacks are added, else `json` re-serialised. Forwarding the bytes saves a
 * JSON.stringify per request (more CPU than the JSON.parse for a large body;
 * docs/decisions/012-request-bodies-as-sent.md) and keeps the client's exact
 * number formatting; a body with duplicate top-level keys is always re-serialised (see JsonBody).
 */
export function upstreamBody(body: JsonBody, members: Record<string, unknown>): string | Buffer {
  const reserialised = () => JSON.stringify({ ...body.json, ...members });
  if (!body.verbatim) return reserialised();
  let append = '';
  for (const key in members) {
    const value = members[key];
    const has = Object.hasOwn(body.json, key);
    if (has ? body.json[key] === value : value === undefined) continue;
    if (has) return reserialised();
    append += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  if (!append) return body.raw;
  // Spliced after the last member, before the object's closing brace: an empty object has none.
  if (Object.keys(body.json).length === 0) return reserialised();
  if (body.raw.length <= SPLICE_AS_TEXT_BYTES) {
    const end = body.text.lastIndexOf('}');
    return body.text.slice(0, end) + append + body.text.slice(end);
  }
  const end = body.raw.lastIndexOf(0x7d);
  return Buffer.concat([body.raw.subarray(0, end), Buffer.from(append), body.raw.subarray(end)]);
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
  if (!isObject(v)) throw bad(field, `"${field}" must be an object.`);
  return v;
}

export { bad as invalidField };

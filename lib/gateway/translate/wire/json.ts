// What every wire reader shares: a JSON object as parsed (nothing about it checked yet), the one
// test that a value is one, and `Received<T>`: a protocol's object as it arrives from outside,
// typed by the protocol's type (so a reader says what it reads) but every field still `unknown`
// until the reader checks it: an upstream or client may send anything. The protocol types beside
// this file are exact for what the gateway writes; `Received` of them is what it reads.
import { isObject, type JsonObject } from '@/lib/json';

// Defined on the base floor (lib/json.ts) so that modules below the gateway share it;
// lib/gateway/body.ts re-exports JsonObject for the request body.
export { isObject, type JsonObject };

/** `T` as received: every field optional and unchecked; fields outside `T` still readable as unknown. */
export type Received<T> = { [K in keyof T]?: unknown } & JsonObject;

/** The objects of a list (anything else in it skipped): a received array read defensively. */
export function objectsOf(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

// Reading what an upstream sent: a reply (or one stream event) as a JSON object, a stream event's
// data. Anything else is the upstream breaking its protocol, which the pipeline treats as the
// channel's failure.
import { isObject, type JsonObject, type Received } from '@/lib/gateway/translate/wire/json';
import type { SseEvent } from '@/lib/gateway/translate/types';
import { UpstreamFailure } from '@/lib/gateway/upstream';

/** Gemini answers some failures as a one-element array: its element (an `unwrap` for upstreamObject). */
export const soleElement = (parsed: unknown): unknown => (Array.isArray(parsed) && parsed.length === 1 ? parsed[0] : parsed);

/**
 * `text` (the upstream's `what`) as a JSON object; `unwrap` may first map what was parsed. `T` is
 * the protocol's type of it (lib/gateway/translate/wire): its fields are named, each still unknown.
 */
export function upstreamObject<T extends object = JsonObject>(
  text: string,
  what: string,
  unwrap: (parsed: unknown) => unknown = (parsed) => parsed,
): Received<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamFailure('protocol', `upstream sent malformed JSON in ${what}`);
  }
  parsed = unwrap(parsed);
  if (!isObject(parsed)) throw new UpstreamFailure('protocol', `upstream sent a non-object in ${what}`);
  // Sound: Received<T> claims only that it is an object whose fields are yet to be checked.
  return parsed as Received<T>;
}

/** A stream event's data, trimmed; an `error` event is the upstream's failure. */
export function eventData(ev: SseEvent): string {
  const data = ev.data.trim();
  if (ev.event === 'error') throw new UpstreamFailure('status', `upstream stream error: ${data.slice(0, 300)}`);
  return data;
}

// Reading what an upstream sent: a reply (or one stream event) as a JSON object, a stream event's
// data. Anything else is the upstream breaking its protocol, which the pipeline treats as the
// channel's failure.
import type { JsonObject } from '@/lib/gateway/body';
import type { SseEvent } from '@/lib/gateway/translate/types';
import { UpstreamFailure } from '@/lib/gateway/translate/failure';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `text` (the upstream's `what`) as a JSON object; `unwrap` may first map what was parsed. */
export function upstreamObject(text: string, what: string, unwrap: (parsed: unknown) => unknown = (parsed) => parsed): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamFailure('protocol', `upstream sent malformed JSON in ${what}`);
  }
  parsed = unwrap(parsed);
  if (!isObject(parsed)) throw new UpstreamFailure('protocol', `upstream sent a non-object in ${what}`);
  return parsed;
}

/** A stream event's data, trimmed; an `error` event is the upstream's failure. */
export function eventData(ev: SseEvent): string {
  const data = ev.data.trim();
  if (ev.event === 'error') throw new UpstreamFailure('status', `upstream stream error: ${data.slice(0, 300)}`);
  return data;
}

// The request record: what one /v1 request is, as its log row, its headers and its metrics say it.
// A plain object, written only here: every other module reads it (its fields are readonly outside)
// and changes it through one of the named writes below, so that a field's every writer is in one
// file and says why it writes (docs/decisions/058).
import { randomBytes } from 'node:crypto';
import type { ModelInfo } from '@/lib/config';
import type { Attempt, BillingNote } from '@/lib/gateway/call-channel';
import { NO_CHARGE, type Charge } from '@/lib/gateway/settlement';

// Request ids: a random per-process prefix (64 bits) and a counter; unique across instances and
// restarts without spending a CSPRNG call per request. They are identifiers, not secrets.
const ID_PREFIX = randomBytes(8).toString('hex');
let idSeq = 0;

interface Fields {
  requestId: string;
  startedAt: number;
  /** performance.now() at the start: the request's latency is measured from it. */
  t0: number;
  /** The protocol the client speaks (its surface's name): spans and metrics. */
  surface: string;
  /** The route's path or pattern (metrics label, log field). */
  endpoint: string;
  modelRequested: string | null;
  /** The model that served (or, before that, the one planned). */
  model: ModelInfo | undefined;
  /** The channel that served; null: none did. */
  channel: string | null;
  attempts: Attempt[];
  routeReason: string | null;
  /** The region the request must be served in (lib/gateway/region.ts); null: anywhere. */
  region: string | null;
  /** The region of the channel that served (X-Service-Region, the log). */
  servedRegion: string | null;
  /** What the answering attempt dropped from the request (the `x-service-dropped` header). */
  dropped: readonly string[] | undefined;
  /** The output cap a request was lowered to, to fit its key budget or balance (admission/clamp.ts). */
  outputClamped: number | null;
  stream: boolean;
  firstTokenMs: number | null;
  /** The settlement, once the reply's usage is known (settlement.ts); NO_CHARGE until then. */
  charge: Charge;
  status: number;
  outcome: string;
  errorCode: string | null;
  /** The response cache's answer for an opted-in request (the `X-Service-Cache` header). */
  cacheResult: 'hit' | 'miss' | undefined;
}

/** A request's record: read anywhere, written through this module's functions only. */
export type RequestRecord = { readonly [K in keyof Fields]: Fields[K] };

const w = (rec: RequestRecord) => rec as Fields;

export function newRecord(surface: string, endpoint: string, fixed?: { requestId: string; startedAt: number }): RequestRecord {
  const rec: Fields = {
    requestId: fixed?.requestId ?? `req_${ID_PREFIX}${(idSeq++).toString(36).padStart(8, '0')}`,
    startedAt: fixed?.startedAt ?? Date.now(),
    t0: performance.now(),
    surface,
    endpoint,
    modelRequested: null,
    model: undefined,
    channel: null,
    attempts: [],
    routeReason: null,
    region: null,
    servedRegion: null,
    dropped: undefined,
    outputClamped: null,
    stream: false,
    firstTokenMs: null,
    charge: NO_CHARGE,
    status: 200,
    outcome: 'ok',
    errorCode: null,
    cacheResult: undefined,
  };
  return rec;
}

export function elapsedMs(rec: RequestRecord): number {
  return Math.round(performance.now() - rec.t0);
}

/** The model the client named (as far as it can be stored). */
export function askedFor(rec: RequestRecord, model: string | null): void {
  w(rec).modelRequested = model;
}

export function streaming(rec: RequestRecord, stream: boolean): void {
  w(rec).stream = stream;
}

/** Where the request may be served (a region), and the model planned first: refusals before an attempt name it. */
export function planned(rec: RequestRecord, model: ModelInfo | undefined, region?: string | null): void {
  w(rec).model = model;
  if (region !== undefined) w(rec).region = region;
}

/** Adds a note to the route reason (the log's "why this channel"). */
export function routeNote(rec: RequestRecord, note: string, replace = false): void {
  w(rec).routeReason = replace || !rec.routeReason ? note : `${rec.routeReason}; ${note}`;
}

/** The output cap was lowered to fit the key budget or balance. */
export function clamped(rec: RequestRecord, tokens: number, note: string): void {
  w(rec).outputClamped = tokens;
  routeNote(rec, note);
}

export function cacheAnswer(rec: RequestRecord, result: 'hit' | 'miss'): void {
  w(rec).cacheResult = result;
}

export function attemptStarted(rec: RequestRecord, attempt: Attempt): void {
  w(rec).attempts.push(attempt);
}

/** An attempt's channel answered: it is the request's channel unless `unserved` follows. */
export function served(rec: RequestRecord, channel: { name: string; region?: string }, model: ModelInfo, dropped: readonly string[] | undefined): void {
  const r = w(rec);
  r.dropped = dropped;
  r.model = model;
  r.channel = channel.name;
  r.servedRegion = channel.region ?? null;
}

/** The channel that answered did not serve after all (its reply was unusable, its key refused): the next is tried. */
export function unserved(rec: RequestRecord, model?: ModelInfo): void {
  const r = w(rec);
  r.channel = null;
  r.dropped = undefined;
  if (model) r.model = model;
}

export function firstToken(rec: RequestRecord): void {
  if (rec.firstTokenMs === null) w(rec).firstTokenMs = elapsedMs(rec);
}

/** The settlement, computed once after the relay; its billing note goes on the serving attempt. */
export function settled(rec: RequestRecord, charge: Charge): void {
  w(rec).charge = charge;
  if (charge.note) noteBilling(rec, charge.note);
}

/** Adds to the `billing` note of the serving attempt (the last one tried). */
export function noteBilling(rec: RequestRecord, note: BillingNote): void {
  const servedAttempt = rec.attempts.at(-1);
  if (servedAttempt) servedAttempt.billing = { ...servedAttempt.billing, ...note };
}

/** The answer's status (a route's own, an upstream error passed through). */
export function answered(rec: RequestRecord, status: number): void {
  w(rec).status = status;
}

/** The request ended in an error: `status` when it was answered as one (not mid-stream). */
export function failed(rec: RequestRecord, code: string, status?: number, outcome = 'error'): void {
  const r = w(rec);
  r.errorCode = code;
  if (r.outcome === 'ok') r.outcome = outcome;
  if (status !== undefined) r.status = status;
}

/** The reply broke off upstream mid-way. */
export function upstreamBroke(rec: RequestRecord): void {
  w(rec).outcome = 'upstream_error';
}

/** The client left: the one place a request becomes client_closed (499). */
export function clientClosed(rec: RequestRecord): void {
  const r = w(rec);
  r.outcome = 'client_closed';
  r.status = 499;
}

import { Agent, errors } from 'undici';
import type { Dispatcher } from 'undici';
import type { ChannelInfo } from '@/lib/config';
import type { ClientSignal } from '@/lib/gateway/types';
import { singleton } from '@/lib/singleton';

// Upstream calls: undici's dispatcher API over one keep-alive Agent per channel. Global fetch
// costs about three times as much CPU per call; undici's `request` wraps the reply in a Readable
// stream and an async resource, which in interleaved A/B runs cost streaming time to first byte and
// a noticeable share of the lean path's CPU per call over the handler below
// (docs/decisions/010-upstream-client.md).

interface Target {
  agent: Agent;
  origin: string;
  /** The path of the channel's base URL (e.g. "/v1"), which every call's path extends. */
  prefix: string;
}

const targets = new WeakMap<ChannelInfo, Target>();

function targetFor(channel: ChannelInfo): Target {
  let target = targets.get(channel);
  if (target) return target;
  const agents = singleton('upstream-agents', () => new Map<string, Agent>());
  const key = `${channel.name}|${channel.baseUrl}|${channel.timeouts.connectMs}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({
      connect: { timeout: channel.timeouts.connectMs },
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      // No per-channel cap: the limiter already bounds concurrency, and a cap would make request
      // N+1 wait for a whole long stream to end.
      connections: null,
      pipelining: 1,
    });
    agents.set(key, agent);
  }
  const url = new URL(channel.baseUrl);
  target = { agent, origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
  targets.set(channel, target);
  return target;
}

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: 'connect' | 'timeout' | 'status' | 'protocol',
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Above this many unread bytes the upstream socket is paused until the reader catches up. */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * An upstream reply body: the chunks undici hands over, queued until read. Read it once, either
 * with `for await` (streams) or `readUpstreamBody` (whole replies), or let it go with `discard`.
 * Unread bytes beyond HIGH_WATER_BYTES pause the socket (backpressure toward the upstream).
 * `destroy()` stops the reply: a pending read then fails with an AbortError.
 */
export class UpstreamBody implements AsyncIterableIterator<Buffer> {
  /** Why the reply failed (connection lost, body timeout), once it has. */
  errored: Error | null = null;
  /** True once the reply has failed or was stopped by `destroy()`. */
  destroyed = false;
  private ended = false;
  private queue: Buffer[] = [];
  private queued = 0;
  private waiter: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: Error) => void } | null = null;
  private collector: { data: (chunk: Buffer) => void; end: () => void; error: (err: Error) => void } | null = null;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** @internal From the dispatch handler. */
  push(chunk: Buffer): void {
    if (this.destroyed) return;
    if (this.collector) return this.collector.data(chunk);
    const waiter = this.takeWaiter();
    if (waiter) return waiter.resolve({ value: chunk, done: false });
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued > HIGH_WATER_BYTES) this.controller.pause();
  }

  /** @internal From the dispatch handler. */
  end(): void {
    if (this.destroyed) return;
    this.ended = true;
    if (this.collector) return this.collector.end();
    this.takeWaiter()?.resolve({ value: undefined, done: true });
  }

  /** @internal From the dispatch handler: the reply broke off. */
  fail(err: Error): void {
    if (this.destroyed || this.ended) return;
    this.destroyed = true;
    this.errored = err;
    this.queue = [];
    if (this.collector) return this.collector.error(err);
    this.takeWaiter()?.reject(err);
  }

  /** Stops the reply (closes the upstream connection unless it already ended). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.queue = [];
    const reason = new errors.RequestAbortedError();
    if (!this.ended) this.controller.abort(reason);
    this.takeWaiter()?.reject(reason);
    this.collector?.error(reason);
  }

  /** The pending read, if any, removed so that it is settled exactly once. */
  private takeWaiter(): UpstreamBody['waiter'] {
    const waiter = this.waiter;
    this.waiter = null;
    return waiter;
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.queue.shift();
    if (chunk) {
      this.queued -= chunk.length;
      if (this.queue.length === 0 && this.controller.paused) this.controller.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.errored) return Promise.reject(this.errored);
    if (this.destroyed) return Promise.reject(new errors.RequestAbortedError());
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Leaving a `for await` early (break or throw) stops the reply, as with a Readable. */
  return(): Promise<IteratorResult<Buffer>> {
    if (!this.ended) this.destroy();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** @internal Hands every queued and future chunk to `collector` (readUpstreamBody, discard). */
  collect(collector: NonNullable<UpstreamBody['collector']>): void {
    const queued = this.queue;
    this.queue = [];
    this.queued = 0;
    for (const chunk of queued) {
      collector.data(chunk);
      if (this.destroyed) return; // refused (over a size cap) by the collector
    }
    this.collector = collector;
    if (this.ended) return collector.end();
    // Resumed last: undici's resume() parses what the socket holds at once, handing those chunks
    // (and perhaps the end) to the collector before it returns. Resumed before the queue was
    // handed over, they came first, and a whole reply read this way was out of order (the
    // "malformed JSON" of a 5 MB reply read after a short wait on a loaded machine).
    if (this.controller.paused) this.controller.resume();
  }
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export interface CallOptions {
  /**
   * The signal no longer touches the reply once its headers arrived (a reply is read on, for
   * billing, after its client has gone); without it the signal also stops the body.
   */
  detachOnHeaders?: boolean;
}

const NO_OPTIONS: CallOptions = {};

/**
 * One upstream call: resolves with the status, headers and a body to read once the headers are
 * in; rejects (classified) when the call fails before that. `headers` get a JSON content type
 * unless they name one. The signal cancels the call (see CallOptions.detachOnHeaders for its reach
 * over the body).
 */
export function callUpstream(
  channel: ChannelInfo,
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
  signal: ClientSignal,
  options: CallOptions = NO_OPTIONS,
): Promise<UpstreamResponse> {
  const { agent, origin, prefix } = targetFor(channel);
  const detachOnHeaders = options.detachOnHeaders === true;
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let reply: UpstreamBody | null = null;
    let cancelled: Error | null = null;
    const onAbort = () => {
      if (reply) return reply.destroy();
      cancelled = new errors.RequestAbortedError();
      // Settled at once: a call still waiting for its connection must not hold the pipeline.
      controller?.abort(cancelled);
      reject(cancelled);
    };
    if (signal.aborted) return reject(new errors.RequestAbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (cancelled) c.abort(cancelled);
      },
      onResponseStart(c, statusCode, responseHeaders) {
        if (detachOnHeaders) signal.removeEventListener('abort', onAbort);
        reply = new UpstreamBody(c);
        resolve({ status: statusCode, headers: responseHeaders as UpstreamResponse['headers'], body: reply });
      },
      onResponseData(_c, chunk) {
        reply!.push(chunk);
      },
      onResponseEnd() {
        signal.removeEventListener('abort', onAbort);
        reply!.end();
      },
      onResponseError(_c, err) {
        signal.removeEventListener('abort', onAbort);
        if (reply) reply.fail(classify(err));
        else reject(classify(err));
      },
    };
    agent.dispatch(
      {
        origin,
        path: prefix + path,
        method: 'POST',
        // A channel's constant headers (the pipeline's, content type included) are used as they are.
        headers: headers['content-type'] === undefined ? { 'content-type': 'application/json', ...headers } : headers,
        body,
        headersTimeout: channel.timeouts.firstByteMs,
        bodyTimeout: channel.timeouts.idleMs,
      },
      handler,
    );
  });
}

export function classify(err: unknown): UpstreamFailure | Error {
  if (err instanceof UpstreamFailure) return err;
  const code = (err as { code?: string }).code ?? '';
  const name = (err as { name?: string }).name ?? '';
  if (name === 'AbortError' || code === 'ABORT_ERR' || code === 'UND_ERR_ABORTED') return err as Error;
  if (code.includes('TIMEOUT') || name.includes('Timeout')) return new UpstreamFailure('timeout', `upstream timed out (${code || name})`);
  return new UpstreamFailure('connect', `upstream connection failed (${code || (err as Error).message})`);
}

/** Reads a whole upstream body, refusing beyond maxBytes (a runaway reply must not exhaust memory). */
export function readUpstreamBody(body: UpstreamBody, maxBytes: number): Promise<string> {
  // The body may have failed or closed while the pipeline waited (for a speculative admission).
  if (body.errored) return Promise.reject(body.errored);
  if (body.destroyed) return Promise.reject(new UpstreamFailure('protocol', 'upstream reply closed before it was read'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.collect({
      data(chunk) {
        size += chunk.length;
        if (size > maxBytes) {
          // Rejected first: destroying the body reports an abort to this collector too.
          reject(new UpstreamFailure('protocol', `upstream reply larger than ${maxBytes} bytes`));
          body.destroy();
          return;
        }
        chunks.push(chunk);
      },
      end: () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')),
      error: (err) => reject(classify(err)),
    });
  });
}

/** Reads a body to its end and drops it (the connection stays reusable), ignoring failures. */
export function discard(body: UpstreamBody): void {
  if (body.destroyed) return;
  body.collect({ data: () => undefined, end: () => undefined, error: () => undefined });
}

// Credentials as they appear in echoed requests and error texts: a header or field named like one,
// its value (a bearer or basic scheme included) up to a quote, space or separator; Google's `key=`
// query parameter.
const SECRET_FIELD = /((?:proxy-)?authorization|x-api-key|x-goog-api-key|api[-_]?key)(\\?["']?\s*[:=]\s*\\?["']?\s*)(?:(?:bearer|basic)\s+)?[^\s"'\\,;}&]+/gi;
const KEY_PARAM = /([?&]key=)[^&\s"'\\]+/gi;
const secretsOf = new WeakMap<ChannelInfo, string[]>();

/**
 * An upstream's text (an error body, an error event) without the channel's credentials: its key,
 * the user and password of its base URL, and any value of an Authorization, x-api-key or
 * x-goog-api-key field or `key=` parameter. Applied to whatever of an upstream reply reaches a
 * client or the request log: an upstream that echoes the request's headers must not hand out the key.
 */
/** A URL's user or password as typed when it is not valid %-encoding (a bare `%`): never a throw. */
function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function redactUpstreamText(text: string, channel: ChannelInfo): string {
  let secrets = secretsOf.get(channel);
  if (!secrets) {
    const url = new URL(channel.baseUrl);
    const found = [channel.apiKey, url.username, url.password, safeDecode(url.username), safeDecode(url.password)];
    secrets = [...new Set(found.filter((v) => v.length >= 4))].sort((a, b) => b.length - a.length);
    secretsOf.set(channel, secrets);
  }
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out.replace(SECRET_FIELD, '$1$2[redacted]').replace(KEY_PARAM, '$1[redacted]');
}

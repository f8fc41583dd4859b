import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { ChannelInfo } from '@/lib/config';
import type { ClientSignal } from '@/lib/gateway/types';
import { singleton } from '@/lib/singleton';

// Upstream calls: undici's request API over one keep-alive Agent per channel (global fetch costs
// about three times as much CPU per call).

function agentFor(channel: ChannelInfo): Agent {
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
  return agent;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
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

export function callUpstream(
  channel: ChannelInfo,
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
  signal: ClientSignal,
): Promise<UpstreamResponse> {
  return request(channel.baseUrl + path, {
    method: 'POST',
    dispatcher: agentFor(channel),
    headers: { 'content-type': 'application/json', ...headers },
    body,
    // undici takes any EventTarget-like signal (it calls addEventListener/removeEventListener).
    signal: signal as AbortSignal,
    headersTimeout: channel.timeouts.firstByteMs,
    bodyTimeout: channel.timeouts.idleMs,
  }).then(
    (res) => ({ status: res.statusCode, headers: res.headers, body: res.body }),
    (err: unknown) => {
      throw classify(err);
    },
  );
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
/**
 * Calls the upstream on behalf of a client: the client leaving before the upstream answers cancels
 * the call. With `detachOnHeaders` the link is cut once headers arrive, so a reply can still be read
 * (for billing) after the client has gone; otherwise the client's departure also cancels the body.
 */
export function callForClient(
  channel: ChannelInfo,
  path: string,
  body: string | Buffer,
  headers: Record<string, string>,
  clientSignal: ClientSignal,
  detachOnHeaders: boolean,
): Promise<UpstreamResponse> {
  // Without detaching, the client's own signal cancels both the call and the body.
  if (!detachOnHeaders) return callUpstream(channel, path, body, headers, clientSignal);
  const upstream = new AbortController();
  const cancel = () => upstream.abort();
  clientSignal.addEventListener('abort', cancel, { once: true });
  return callUpstream(channel, path, body, headers, upstream.signal).finally(() => clientSignal.removeEventListener('abort', cancel));
}

export function readUpstreamBody(body: UpstreamResponse['body'], maxBytes: number): Promise<string> {
  // The body may have failed or closed while the pipeline waited (for a speculative admission):
  // its 'error' has been emitted already and would never reach the listeners below.
  if (body.errored) return Promise.reject(classify(body.errored));
  if (body.destroyed) return Promise.reject(new UpstreamFailure('protocol', 'upstream reply closed before it was read'));
  // Plain 'data' events: an async iterator costs a promise and several ticks per chunk.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        reject(new UpstreamFailure('protocol', `upstream reply larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    body.on('error', (err) => reject(classify(err)));
  });
}

export function discard(body: UpstreamResponse['body']): void {
  body.resume();
  body.on('error', () => undefined);
}

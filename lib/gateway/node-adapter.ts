import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '@/lib/errors';
import { handleGateway } from '@/lib/gateway/handler';
import { log, errorFields } from '@/lib/log';
import { OnceSignal } from '@/lib/gateway/signal';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';

// The lean production path: node:http straight into the gateway pipeline, no framework in between.

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) {
    req.resume();
    return Promise.reject(new GatewayError('body_too_large', `Request body is larger than ${maxBytes} bytes.`));
  }
  // Usually the whole body came with the headers and node's parser has buffered all of it before
  // the pipeline asks (the parser frames it by Content-Length, so no byte of it can follow): take
  // it at once instead of waiting two or three ticks for 'data' and 'end'.
  if (req.headers['content-length'] !== undefined && req.readableLength === declared && !req.readableFlowing && !req.readableEnded) {
    return Promise.resolve(declared === 0 ? Buffer.alloc(0) : (req.read() as Buffer));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.resume();
        reject(new GatewayError('body_too_large', `Request body is larger than ${maxBytes} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The response side of one request. A class rather than closures: the lean path makes one per request. */
class NodeSink implements ResponseSink {
  started = false;
  // Whether the response announced trailers. Headers given to writeHead as an object are not
  // visible to res.getHeader, so this is remembered here.
  private announcesTrailers = false;

  constructor(private readonly res: ServerResponse) {}

  start(status: number, headers: Record<string, string>): void {
    this.started = true;
    this.announcesTrailers = headers.trailer !== undefined;
    this.res.writeHead(status, headers);
  }

  write(chunk: string | Uint8Array): Promise<void> {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return Promise.resolve();
    if (res.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  end(chunk?: string | Uint8Array, trailers?: Record<string, string>): void {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return;
    if (trailers && this.announcesTrailers) res.addTrailers(trailers);
    res.end(chunk);
  }
}

/** The request side: what the pipeline reads of node's request. */
class NodeRequest implements GatewayRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  // Node joins repeated request headers into one string, except set-cookie (never read here).
  readonly headers: Record<string, string | undefined>;
  readonly ip: string;

  constructor(
    private readonly req: IncomingMessage,
    readonly signal: OnceSignal,
  ) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.method = req.method ?? 'GET';
    this.path = q === -1 ? url : url.slice(0, q);
    this.query = q === -1 ? '' : url.slice(q + 1);
    this.headers = req.headers as Record<string, string | undefined>;
    this.ip = req.socket.remoteAddress ?? 'unknown';
  }

  readBody(maxBytes: number): Promise<Buffer> {
    return readBody(this.req, maxBytes);
  }
}

export function handleNodeRequest(req: IncomingMessage, res: ServerResponse): void {
  // Aborted once, when the client's connection closes before the response finished.
  const signal = new OnceSignal();
  res.on('close', () => {
    if (!res.writableFinished) signal.abort();
  });
  pending++;
  void serve(new NodeRequest(req, signal), res);
}

async function serve(request: NodeRequest, res: ServerResponse): Promise<void> {
  try {
    await handleGateway(request, new NodeSink(res));
  } catch (err) {
    log('error', 'gateway handler crashed', errorFields(err));
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    if (!res.writableEnded) res.end();
  } finally {
    pending--;
  }
}

// A request's pipeline outlives its response: it settles the reservation and queues the log row
// after the last byte went out. Shutdown waits for these before the final log flush.
let pending = 0;

/** Gateway requests whose pipeline has not finished yet (response sent or not). */
export function pendingGatewayRequests(): number {
  return pending;
}

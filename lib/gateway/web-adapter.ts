import { GatewayError } from '@/lib/errors';
import { handleGateway } from '@/lib/gateway/handler';
import { log, errorFields } from '@/lib/log';
import type { GatewayRequest, ResponseSink } from '@/lib/gateway/types';
import { lifecycle } from '@/lib/shutdown';
import { ipFromHeaders } from '@/lib/keys/access';
import { clientIpFrom } from '@/lib/keys/client-ip';

const state = lifecycle();

// The route-handler path (next dev, next start): Web Request/Response around the same pipeline.

async function readBody(request: Request, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new GatewayError('body_too_large', `Request body is larger than ${maxBytes} bytes.`);
  if (!request.body) return Buffer.alloc(0);
  // Read chunk by chunk and stop at the limit: a chunked upload without Content-Length must not be
  // buffered whole (nor waited for to its end) before it is refused.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      reader.cancel().catch(() => undefined);
      throw new GatewayError('body_too_large', `Request body is larger than ${maxBytes} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export function handleWebRequest(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const headers: Record<string, string | undefined> = {};
  request.headers.forEach((v, k) => (headers[k] = v));
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (closed = true),
  });
  let resolveResponse!: (r: Response) => void;
  const response = new Promise<Response>((r) => (resolveResponse = r));
  let started = false;
  const sink: ResponseSink = {
    get started() {
      return started;
    },
    start(status, h) {
      started = true;
      // The Web Response frames its own body: no trailers, no precomputed length.
      const { trailer: _trailer, 'content-length': _length, ...rest } = h;
      resolveResponse(new Response(status === 204 ? null : stream, { status, headers: rest }));
    },
    async write(chunk) {
      if (!closed) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    },
    end(chunk) {
      if (closed) return;
      if (chunk) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      closed = true;
      controller.close();
    },
  };
  const gatewayRequest: GatewayRequest = {
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers,
    ip: clientIpFrom(undefined, headers['x-forwarded-for']),
    readBody: (max) => readBody(request, max),
    signal: request.signal,
  };
  ipFromHeaders(gatewayRequest); // lib/keys: its ip is a header's, not the socket's
  state.webPending++;
  handleGateway(gatewayRequest, sink)
    .catch((err) => log('error', 'gateway handler crashed', errorFields(err)))
    .finally(() => {
      state.webPending--;
      if (!started) resolveResponse(new Response(null, { status: 499 }));
    });
  return response;
}

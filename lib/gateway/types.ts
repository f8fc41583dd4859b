// The framework-free request/response surface of the gateway pipeline. The node:http adapter
// (production) and the Next.js route-handler adapter (next dev) both translate to these.

export interface GatewayRequest {
  method: string;
  /** Path without the query string, e.g. /v1/chat/completions. */
  path: string;
  /** The query string without its `?` ('' for none). */
  query?: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string | undefined>;
  ip: string;
  /** Reads the body, refusing (413) beyond maxBytes. */
  readBody(maxBytes: number): Promise<Buffer>;
  /** Aborted when the client disconnects. */
  signal: ClientSignal;
}

/**
 * What the pipeline uses of the client's cancellation signal. A DOM AbortSignal is one (route
 * handlers); the lean path uses a lighter object (AbortController costs an EventTarget per request).
 * undici accepts either as its `signal`.
 */
export interface ClientSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface ResponseSink {
  start(status: number, headers: Record<string, string>): void;
  /** Resolves once the chunk is handed over (waits on back-pressure). */
  write(chunk: string | Uint8Array): Promise<void>;
  end(chunk?: string | Uint8Array, trailers?: Record<string, string>): void;
  readonly started: boolean;
}

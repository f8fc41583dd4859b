// The error a translator throws for an upstream reply it cannot use (and the HTTP client for a call
// that failed): part of the translator contract (types.ts), so that a translator needs nothing of
// the HTTP client module (lib/gateway/upstream.ts) to say an upstream reply was unusable.
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: 'connect' | 'timeout' | 'status' | 'protocol',
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

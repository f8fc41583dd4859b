// The part of autocannon (a dev dependency without types of its own) the benchmark uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    timeout?: number;
    amount?: number;
    duration?: number;
  }
  interface Result {
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  interface Instance extends EventEmitter {
    on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): this;
  }
  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}

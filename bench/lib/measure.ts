// Measuring: load runs (autocannon) with exact latency percentiles, single requests with their
// time to first byte, and CPU time and RSS of a process tree read from /proc.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { cpuMicros, processTree, serverPid } from '../proc.mjs';

// CPU of the shared services during the c=50 runs (they share this machine's cores with the proxy).
export const SERVICE_PIDS = { redis: serverPid('redis-server'), postgres: serverPid('postgres') };

/** VmRSS of the process tree, in MB. */
export function rssMb(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      /* gone */
    }
  }
  return kb / 1024;
}

let autocannon: typeof import('autocannon').default;
try {
  autocannon = (await import('autocannon')).default;
} catch {
  process.stderr.write('bench: autocannon is not installed (it is a dev dependency: run `npm install` once).\n');
  process.exit(2);
}

/** Latency samples in ms, kept whole so percentiles are exact. */
export class Samples {
  a = new Float64Array(1 << 16);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  percentiles(...ps: number[]): number[] {
    const s = this.a.slice(0, this.n).sort();
    return ps.map((p) => (this.n === 0 ? NaN : s[Math.min(this.n - 1, Math.max(0, Math.ceil((p / 100) * this.n) - 1))]!));
  }
}

export type Headers = Record<string, string>;

export interface LoadSpec {
  url: string;
  headers: Headers;
  body: string;
  connections: number;
  seconds?: number;
  amount?: number;
  cpuPids?: number[];
  into?: Samples | null;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  bad: string[];
  /** CPU µs per successful request, one per pid of `cpuPids`. */
  cpuPerReq: number[];
  wall: number;
}

/**
 * One autocannon run. Latency percentiles are computed from every 2xx response time
 * (autocannon's own histogram has 1 ms resolution, too coarse for the c=1 comparison).
 * `cpuPids` are sampled around the run for CPU microseconds per request.
 */
export function load({ url, headers, body, connections, seconds, amount, cpuPids = [], into = null }: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const lat = new Samples();
    const cpu0 = cpuPids.map(cpuMicros);
    const t0 = performance.now();
    const inst = autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        connections,
        pipelining: 1,
        timeout: 30,
        ...(amount ? { amount } : { duration: seconds }),
      },
      (err, result) => {
        if (err) return reject(err);
        const wall = (performance.now() - t0) / 1000;
        const cpu = cpuPids.map((p, i) => cpuMicros(p) - cpu0[i]!);
        const ok = lat.n;
        const [p50, p99] = lat.percentiles(50, 99) as [number, number];
        const bad = Object.entries(result.statusCodeStats ?? {})
          .filter(([code]) => !code.startsWith('2'))
          .map(([code, { count }]) => `${count}×${code}`);
        resolve({
          requests: ok,
          rps: ok / wall,
          p50,
          p99,
          errors: result.errors + result.timeouts,
          non2xx: result.non2xx,
          bad,
          cpuPerReq: cpu.map((c) => (ok ? c / ok : NaN)),
          wall,
        });
      },
    );
    inst.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) {
        lat.push(ms);
        into?.push(ms);
      }
    });
  });
}

export interface OneReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ttfbMs: number;
  totalMs: number;
  reads: number;
  gaps: number[];
}

/** One request with node:http: status, body, time to first byte, and the spacing of the body's reads. */
export function oneRequest(agent: http.Agent, url: string, headers: Headers, body: string): Promise<OneReply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const payload = Buffer.from(body);
    let t0 = 0;
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
      },
      (res) => {
        let ttfb = NaN;
        let last = 0;
        const chunks: Buffer[] = [];
        // The time between consecutive reads of the body: a proxy that forwards each chunk as it
        // arrives shows the upstream's spacing, one that batches shows fewer reads, further apart.
        const gaps: number[] = [];
        res.on('data', (d: Buffer) => {
          const now = performance.now();
          if (Number.isNaN(ttfb)) ttfb = now - t0;
          else gaps.push(now - last);
          last = now;
          chunks.push(d);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ttfbMs: ttfb,
            totalMs: performance.now() - t0,
            reads: chunks.length,
            gaps,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('request timed out')));
    t0 = performance.now();
    req.end(payload);
  });
}

export interface TtfbResult {
  p50: number;
  p99: number;
  reads50: number;
  gap50: number;
  gap99: number;
  failures: number;
  firstFailure: string;
  cpuPerReq: number[];
}

/** Sequential streaming requests at c=1: time to first body byte. */
export async function ttfbRun({
  url,
  headers,
  body,
  n,
  warm = 10,
  cpuPids = [],
  done = 'data: [DONE]',
}: {
  url: string;
  headers: Headers;
  body: string;
  n: number;
  warm?: number;
  cpuPids?: number[];
  done?: string;
}): Promise<TtfbResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = new Samples();
  const reads = new Samples();
  const gaps = new Samples();
  let failures = 0;
  let firstFailure = '';
  try {
    for (let i = 0; i < warm; i++) await oneRequest(agent, url, headers, body);
    const cpu0 = cpuPids.map(cpuMicros);
    for (let i = 0; i < n; i++) {
      const r = await oneRequest(agent, url, headers, body);
      if (r.status !== 200 || !r.body.includes(done)) {
        failures++;
        firstFailure ||= `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
      } else {
        lat.push(r.ttfbMs);
        reads.push(r.reads);
        for (const g of r.gaps) gaps.push(g);
      }
    }
    const [p50, p99] = lat.percentiles(50, 99) as [number, number];
    const [reads50] = reads.percentiles(50) as [number];
    const [gap50, gap99] = gaps.percentiles(50, 99) as [number, number];
    return { p50, p99, reads50, gap50, gap99, failures, firstFailure, cpuPerReq: cpuPids.map((p, i) => (cpuMicros(p) - cpu0[i]!) / n) };
  } finally {
    agent.destroy();
  }
}

/** Checks one reply before loading a target, so a misconfiguration fails with a readable reason (null: fine). */
export async function probe(url: string, headers: Headers, body: string, check: (body: string) => boolean): Promise<string | null> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const r = await oneRequest(agent, url, headers, body);
    if (r.status < 200 || r.status >= 300) return `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
    try {
      return check(r.body) ? null : `unexpected reply: ${r.body.slice(0, 300)}`;
    } catch {
      return `unexpected reply: ${r.body.slice(0, 300)}`;
    }
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  } finally {
    agent.destroy();
  }
}

/** GET `url`: its status (0 when unreachable). */
export function probeGet(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

// The two long checks of the lean path, run by the table and on their own (--soak, --streams N):
// RSS over a soak, and N concurrent streams that must all complete.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { note, sleep, type Server } from './children';
import { Samples, load, oneRequest, rssMb, type Headers, type LoadResult, type OneReply } from './measure';
import { CHUNKS, LONG_CHUNK_MS, opt } from './options';
import { failures, fmt, recordRun } from './report';
import { gatewayGauges } from './services';
import { CHAT, CHAT_STREAM_LONG, isStream } from './workloads';

export interface Soak {
  r: LoadResult;
  before: number;
  after: number;
  growth: number;
  peak: number;
  samples: number[];
  queues: number[];
  pass: boolean;
}

/**
 * RSS over a long run: `--soak-requests` (100,000) requests at c=50 on an already warm gateway,
 * RSS read after a short pause before and after (and every second in between).
 */
export async function soakRun(gw: Server, url: string, auth: Headers): Promise<Soak> {
  const n = Number(opt['soak-requests']);
  // Retained memory: RSS read after a full GC (GET /metrics?gc=1; the bench starts this gateway
  // with --expose-gc and METRICS_ALLOW_GC=1), so the figure is what the process keeps, not where
  // the collector happens to be in its cycle. The peak without forced GCs is printed too.
  const settledRss = async () => {
    for (let i = 0; i < 2; i++) {
      await gatewayGauges(gw.url, { gc: true });
      await sleep(750);
    }
    return rssMb(gw.pid);
  };
  const before = await settledRss();
  const samples: number[] = [];
  const queues: number[] = [];
  const sampler = setInterval(() => {
    samples.push(rssMb(gw.pid));
    void gatewayGauges(gw.url).then((g) => queues.push(g.logQueue));
  }, 1000);
  const r = recordRun('soak', await load({ url, headers: auth, body: CHAT, connections: 50, amount: n, cpuPids: [gw.pid] }));
  clearInterval(sampler);
  await sleep(2000); // let the request-log writer drain
  const after = await settledRss();
  const growth = (after - before) / before;
  return { r, before, after, growth, peak: Math.max(before, ...samples), samples, queues, pass: growth < 0.1 };
}

export function soakLines({ r, before, after, growth, peak, samples, queues }: Soak): string[] {
  return [
    `soak: ${r.requests.toLocaleString('en-US')} requests in ${r.wall.toFixed(1)} s (${fmt.rps(r.rps)} req/s), p50 ${fmt.ms(r.p50)} ms, p99 ${fmt.ms(r.p99)} ms, CPU ${fmt.us(r.cpuPerReq[0])} µs/req`,
    `  RSS after a full GC ${fmt.mb(before)} MB → ${fmt.mb(after)} MB: growth ${fmt.pct(growth * 100)}  ${growth < 0.1 ? 'PASS' : 'FAIL'} (target < 10%); peak without forced GC ${fmt.mb(peak)} MB`,
    `  RSS every ~5 s: ${samples
      .filter((_, i) => i % 5 === 0)
      .map(fmt.mb)
      .join(' ')} MB`,
    `  request-log queue (rows waiting for the database) every ~5 s: ${queues.filter((_, i) => i % 5 === 0).join(' ')}`,
  ];
}

export interface Streams {
  lines: string[];
  results: Partial<Record<'direct' | 'floor' | 'lean', { n: number; ok: number; wall: number }>>;
}

/**
 * N concurrent streams (chunks --stream-chunk-ms apart, from the upstream's /long prefix), first
 * straight at the upstream, then through the floor proxy (what proxying alone costs), then through
 * the lean gateway: all must complete. Returns the lines to print and, per target, how many
 * completed and in what wall time.
 */
export async function concurrentStreams(n: number, upstream: Server, floor: Server, gw: Server, auth: Headers): Promise<Streams> {
  const lines = [`streams: ${n} concurrent streaming requests, each ${CHUNKS} chunks × ${LONG_CHUNK_MS} ms (≈ ${((CHUNKS - 1) * LONG_CHUNK_MS) / 1000} s)`];
  const results: Streams['results'] = {};
  const targets: ['direct' | 'floor' | 'lean', string, string, Headers][] = [
    ['direct', 'direct (upstream)', upstream.url + '/long/v1/chat/completions', {}],
    ['floor', 'floor proxy', floor.url + '/long/v1/chat/completions', {}],
    ['lean', 'gateway, lean /v1', gw.url + '/v1/chat/completions', auth],
  ];
  for (const [key, label, url, headers] of targets) {
    note(`streams: ${n} concurrent against ${label}`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const t0 = performance.now();
    const settled = await Promise.allSettled(Array.from({ length: n }, () => oneRequest(agent, url, headers, CHAT_STREAM_LONG)));
    const wall = (performance.now() - t0) / 1000;
    agent.destroy();
    const good = (s: PromiseSettledResult<OneReply>): s is PromiseFulfilledResult<OneReply> =>
      s.status === 'fulfilled' && s.value.status === 200 && isStream(s.value.body);
    const ok = settled.filter(good);
    const ttfbs = new Samples();
    const totals = new Samples();
    for (const s of ok) {
      ttfbs.push(s.value.ttfbMs);
      totals.push(s.value.totalMs);
    }
    const [t50, t99, tmax] = ttfbs.percentiles(50, 99, 100);
    const [d50, d99, dmax] = totals.percentiles(50, 99, 100);
    const bad = settled.find((s) => !good(s)) as PromiseRejectedResult | PromiseFulfilledResult<OneReply> | undefined;
    const why = !bad ? '' : bad.status === 'rejected' ? (bad.reason as Error).message : `HTTP ${bad.value.status}: ${bad.value.body.slice(0, 200)}`;
    lines.push(
      `  ${label.padEnd(20)} ${ok.length}/${n} complete ${ok.length === n ? 'PASS' : 'FAIL'} in ${wall.toFixed(2)} s; TTFB p50 ${fmt.ms(t50)} p99 ${fmt.ms(t99)} max ${fmt.ms(tmax)} ms; duration p50 ${fmt.ms(d50)} p99 ${fmt.ms(d99)} max ${fmt.ms(dmax)} ms${why ? `; first failure: ${why}` : ''}`,
    );
    if (ok.length !== n) failures.push(`streams ${label}: ${n - ok.length} of ${n} did not complete (${why})`);
    results[key] = { n, ok: ok.length, wall };
  }
  return { lines, results };
}

// Set-up shared by every mode: the build present and snapshotted, PostgreSQL and Redis found, the
// operator config, and the processes measured (fake upstream, floor proxy, gateways) with the
// gauges each gateway exposes on /metrics.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fixtureChannel, fixtureConfig, type FixtureObject } from '../../tests/support/operator-config.mjs';
import { freePort, reachable } from '../proc.mjs';
import { note, readyLine, sleep, startChild, stopChild, type Server } from './children';
import { rssMb, probeGet } from './measure';
import { CHUNKS, LONG_CHUNK_MS, ROOT, opt } from './options';
import { LONG_MODEL } from './workloads';

export const BENCH_METRICS_TOKEN = 'bench-metrics-token';

/** Where the gateways run from: a snapshot of the build (see snapshotBuild) or the repository. */
let buildDir = ROOT;

export function preflight(): void {
  const missing: string[] = [];
  if (!existsSync(path.resolve(ROOT, opt.server))) missing.push(opt.server);
  if (opt.compare && !existsSync(path.resolve(ROOT, opt.compare))) missing.push(opt.compare);
  if (!existsSync(path.join(ROOT, '.next/BUILD_ID'))) missing.push('.next (production build)');
  if (missing.length) {
    process.stderr.write(
      `bench: the production build is missing (${missing.join(', ')}). The benchmark measures the build and builds nothing itself: run \`npm run build\` first.\n`,
    );
    process.exit(2);
  }
}

/**
 * Copies the production build (dist/server.mjs, .next without its caches, next.config.js) into a
 * temporary folder the gateways run from, so a concurrent `npm run build` cannot swap it out in
 * the middle of the run. node_modules, public and prisma (migrations) are linked, not copied.
 * --in-place skips this.
 */
export function snapshotBuild(work: string): void {
  if (opt['in-place']) return;
  const dir = path.join(work, 'build');
  for (let attempt = 0; ; attempt++) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const id = readFileSync(path.join(ROOT, '.next/BUILD_ID'), 'utf8');
    cpSync(path.join(ROOT, '.next'), path.join(dir, '.next'), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !/[\\/]\.next[\\/](cache|dev|trace|trace-build)([\\/]|$)/.test(src),
    });
    mkdirSync(path.join(dir, 'dist'));
    cpSync(path.join(ROOT, 'dist/server.mjs'), path.join(dir, 'dist/server.mjs'));
    for (const f of ['package.json', 'next.config.js', 'next.config.mjs', 'next.config.ts']) {
      if (existsSync(path.join(ROOT, f))) cpSync(path.join(ROOT, f), path.join(dir, f));
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    // lib: the embedded database's worker thread is loaded by path (lib/db/pglite-worker.mjs).
    for (const d of ['public', 'prisma', 'lib']) if (existsSync(path.join(ROOT, d))) symlinkSync(path.join(ROOT, d), path.join(dir, d), 'dir');
    let after = '';
    try {
      after = readFileSync(path.join(ROOT, '.next/BUILD_ID'), 'utf8');
    } catch {
      /* a build is replacing it right now */
    }
    if (after === id && existsSync(path.join(dir, '.next/BUILD_ID'))) {
      buildDir = dir;
      return;
    }
    if (attempt >= 5) throw new Error('the build in .next kept changing while it was being copied; run the benchmark when no build is running');
    note('the build changed while it was being copied; copying again');
  }
}

const redactUrl = (u: string) => u.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');

/** DATABASE_URL and REDIS_URL for the gateways (from the environment, else the local defaults when reachable), and what was chosen. */
export async function resolveServices(): Promise<{ env: Record<string, string>; notes: string[] }> {
  const env: Record<string, string> = {};
  const notes: string[] = [];
  const pick = async (name: 'DATABASE_URL' | 'REDIS_URL', fallback: string, label: string) => {
    const given = process.env[name];
    if (given) {
      if (!(await reachable(given))) throw new Error(`${name}=${given} is not reachable.`);
      env[name] = given;
      notes.push(`${label}: ${redactUrl(given)} (from ${name})`);
    } else if (await reachable(fallback)) {
      env[name] = fallback;
      notes.push(`${label}: ${fallback} (default)`);
    } else {
      notes.push(`${label}: ${fallback} unreachable and ${name} unset — ${name === 'DATABASE_URL' ? 'embedded PGlite' : 'in-process limiter'}`);
    }
  };
  await pick('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/test', 'PostgreSQL');
  if (opt['no-redis']) notes.push('Redis: not used (--no-redis): in-process limiter');
  else await pick('REDIS_URL', 'redis://127.0.0.1:6379', 'Redis');
  return { env, notes };
}

/** The tests' operator config (tests/support/operator-config.mjs) with limits raised and a slow-stream model. */
export function benchConfig(upstreamUrl: string): FixtureObject {
  const timeouts = { connect_ms: 2000, first_byte_ms: 30_000, idle_ms: 30_000 };
  return fixtureConfig({
    channels: [
      fixtureChannel({ protocol: 'openai', suffix: 1, url: upstreamUrl, priority: 10, timeouts }),
      fixtureChannel({ protocol: 'anthropic', suffix: 1, url: upstreamUrl, priority: 10, timeouts }),
      // The same upstream process, whose /long prefix spaces a stream's chunks --stream-chunk-ms apart.
      fixtureChannel({ protocol: 'openai', suffix: 'long', url: `${upstreamUrl}/long`, priority: 10, timeouts, models: [LONG_MODEL] }),
    ],
    models: [
      {
        name: LONG_MODEL,
        owned_by: 'openai',
        kind: 'chat',
        context_window: 128000,
        max_output_tokens: 4096,
        tags: ['chat'],
        input_price_usd_per_million: '0.15',
        output_price_usd_per_million: '0.6',
      },
    ],
    // The account's own limits are raised per account (enterprise override); these platform-wide
    // layers are raised here so a few thousand requests per second are admitted, yet still checked.
    extra: { limits: { global_qps: 10_000_000, embeddings_rpm: 10_000_000, embeddings_concurrency: 10_000 } },
  });
}

export async function startUpstream(chunkMs: number): Promise<Server> {
  const entry = startChild(
    'upstream',
    [
      'bench/upstream.mjs',
      '--chunks',
      String(CHUNKS),
      '--chunk-ms',
      String(chunkMs),
      '--long-chunk-ms',
      String(LONG_CHUNK_MS),
      '--delay-ms',
      opt['upstream-delay-ms'],
    ],
    process.env,
  );
  const { url } = await readyLine(entry);
  return { ...entry, url, pid: entry.child.pid! };
}

export async function startFloor(upstreamUrl: string, client = 'undici'): Promise<Server> {
  const entry = startChild(`floor proxy (${client})`, ['bench/floor-proxy.mjs', '--upstream', upstreamUrl, '--client', client], process.env);
  const { url } = await readyLine(entry);
  return { ...entry, url, pid: entry.child.pid! };
}

/**
 * The node flags an npm script runs the server with (`start`: `node FLAGS… dist/server.mjs`;
 * `start:gateway`: `GATEWAY_ONLY=1 node FLAGS… dist/server.mjs`, its variable set by the caller).
 */
function npmStartFlags(script = 'start'): string[] {
  const words = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[script]!.trim().split(/\s+/);
  const start = words.slice(words.findIndex((w) => !/^[A-Z_]+=/.test(w)));
  if (start[0] !== 'node' || start.at(-1) !== 'dist/server.mjs') throw new Error(`unexpected npm ${script} script: ${words.join(' ')}`);
  return start.slice(1, -1);
}

export type GatewayEnv = NodeJS.ProcessEnv & { GATEWAY_CONFIG: string };

/**
 * A lean gateway the way every measured one starts: with --expose-gc and METRICS_ALLOW_GC=1, so that
 * RSS can be read after a full GC (and so that gateways compared with each other start alike).
 */
export function startMeasuredGateway(gatewayEnv: GatewayEnv, bundle = opt.server): Promise<Server> {
  return startGateway('lean', { ...gatewayEnv, METRICS_ALLOW_GC: '1' }, ['--expose-gc'], bundle);
}

/** As startMeasuredGateway, the way `npm run start:gateway` runs it (GATEWAY_ONLY=1, its node flags). */
export function startMeasuredGatewayOnly(gatewayEnv: GatewayEnv): Promise<Server> {
  return startGateway('lean', { ...gatewayEnv, GATEWAY_ONLY: '1', METRICS_ALLOW_GC: '1' }, ['--expose-gc'], opt.server, 'start:gateway');
}

export async function startGateway(
  mode: 'lean' | 'next',
  gatewayEnv: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  bundle = opt.server,
  script = 'start',
): Promise<Server> {
  const port = await freePort();
  const server = bundle === 'dist/server.mjs' ? path.join(buildDir, 'dist/server.mjs') : path.resolve(ROOT, bundle);
  // The lean rows run what `npm start` runs, flags included.
  const args = [
    ...nodeFlags,
    ...(mode === 'lean'
      ? [...npmStartFlags(script), server]
      : [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'start', '-p', String(port), '-H', '127.0.0.1']),
  ];
  const entry = startChild(
    mode === 'lean' ? `gateway (node ${bundle})` : 'gateway (next start)',
    args,
    { ...gatewayEnv, PORT: String(port), HOST: '127.0.0.1' },
    { cwd: buildDir },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (entry.child.exitCode !== null) throw new Error(`${entry.name} exited with ${entry.child.exitCode}:\n${entry.output()}`);
    const r = await probeGet(`${url}/healthz`);
    if (r === 200) break;
    if (Date.now() > deadline) {
      await stopChild(entry, 1000);
      throw new Error(`${entry.name} did not answer /healthz within 90 s:\n${entry.output()}`);
    }
    await sleep(150);
  }
  return { ...entry, url, pid: entry.child.pid! };
}

/** The gateway's /metrics text (empty when unavailable); `gc` asks for a full GC first. */
function metricsText(baseUrl: string, gc: boolean, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(`${baseUrl}/metrics${gc ? '?gc=1' : ''}`, { agent: false, headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(res.statusCode === 200 ? text : ''));
    });
    req.on('error', () => resolve(''));
    req.setTimeout(timeoutMs, () => req.destroy());
  });
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

export interface Gauges {
  logQueue: number;
  limiterFallbacks: number;
  speculative: number;
}

/** A few gauges from the gateway's /metrics (NaN when unavailable). */
export async function gatewayGauges(baseUrl: string, { gc = false } = {}): Promise<Gauges> {
  const text = await metricsText(baseUrl, gc, 2000);
  return {
    logQueue: metric(text, 'gateway_log_queue_length'),
    limiterFallbacks: metric(text, 'gateway_limiter_fallback_total'),
    speculative: metric(text, 'gateway_speculative_admissions_total'),
  };
}

export interface MemoryGauges {
  heapUsed: number;
  heapTotal: number;
  external: number;
  loopP99: number;
  loopMax: number;
}

/** process.memoryUsage() of a gateway, from its /metrics, in MB (after a full GC when `gc`); the event loop's delay in ms. */
export async function memoryGauges(baseUrl: string, { gc = false } = {}): Promise<MemoryGauges> {
  const text = await metricsText(baseUrl, gc, 5000);
  const mb = (name: string) => metric(text, name) / 1048576;
  const ms = (name: string) => metric(text, name) * 1000;
  return {
    heapUsed: mb('nodejs_heap_used_bytes'),
    heapTotal: mb('nodejs_heap_total_bytes'),
    external: mb('nodejs_external_memory_bytes'),
    loopP99: ms('nodejs_eventloop_delay_p99_seconds'),
    loopMax: ms('nodejs_eventloop_delay_max_seconds'),
  };
}

/** RSS of the process tree after two full GCs (the gateway runs with --expose-gc, METRICS_ALLOW_GC=1), with the heap breakdown. */
export async function settledMemory(gw: Server): Promise<MemoryGauges & { rss: number }> {
  let heap = await memoryGauges(gw.url, { gc: true });
  await sleep(750);
  heap = await memoryGauges(gw.url, { gc: true });
  await sleep(750);
  return { rss: rssMb(gw.pid), ...heap };
}

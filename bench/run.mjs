#!/usr/bin/env node
// npm run bench — performance benchmark of the gateway against a local fake upstream.
// Plain Node ESM (no TS loader needed); TS helpers run as `node --import tsx …` children.
// See bench/README.md for what every row means.
//
//   npm run bench                       the table (direct, floor, gateway lean, gateway next) + targets,
//                                       1000 concurrent streams on the lean path included
//   npm run bench -- --soak             100,000 requests on the lean path, RSS growth
//   npm run bench -- --streams 1000     1000 concurrent streams through the lean path, all must complete
//   npm run bench -- --ttfb-breakdown   streaming TTFB of direct, three floors and the lean gateway with and
//                                       without Redis, interleaved stream by stream (where TTFB goes)
//   npm run bench -- --idle-gaps 0,5,20 non-stream requests at c=1 after idle pauses: what idling costs
//   npm run bench -- --tracing          also the lean gateway with OpenTelemetry tracing on (every request
//                                       sampled, OTLP to a local sink), right after the lean row: CPU per
//                                       request with tracing on vs off, in one run
//   npm run bench -- --response-cache   also the lean gateway answering every request from the response
//                                       cache (x-service-cache): CPU per hit vs per proxied request
//   npm run bench -- --strict           also exit non-zero when a target is missed
//   npm run bench -- --footprint        RSS after start, warm-up and a soak, c=50 latency: PostgreSQL setup
//                                       vs the embedded default (PGlite thread / inline), and GATEWAY_ONLY=1
//   npm run bench -- --profile lean     c=50 load on the lean gateway under `node --cpu-prof`, then the
//                                       top self-time functions of the load window (also: --profile next)
import { spawn } from 'node:child_process';
import { cpuMicros, freePort, processTree, reachable, serverPid } from './proc.mjs';
import { fixtureChannel, fixtureConfig } from '../tests/support/operator-config.mjs';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const T0 = performance.now();

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------
const { values: opt } = parseArgs({
  options: {
    soak: { type: 'boolean', default: false },
    'skip-soak': { type: 'boolean', default: false },
    'soak-requests': { type: 'string', default: '100000' },
    streams: { type: 'string' },
    'stream-chunk-ms': { type: 'string', default: '50' },
    // The table's concurrent-streams check on the lean path (0 leaves it out).
    'table-streams': { type: 'string', default: '1000' },
    strict: { type: 'boolean', default: false },
    profile: { type: 'string' },
    'keep-data': { type: 'boolean', default: false },
    'c1-seconds': { type: 'string', default: '5' },
    'c50-seconds': { type: 'string', default: '8' },
    'warmup-seconds': { type: 'string', default: '2' },
    'ttfb-requests': { type: 'string', default: '100' },
    chunks: { type: 'string', default: '20' },
    'chunk-ms': { type: 'string', default: '5' },
    'upstream-delay-ms': { type: 'string', default: '0' },
    // A/B: another bundle of server.ts for the lean rows (default: the production build), and a subset of rows.
    server: { type: 'string', default: 'dist/server.mjs' },
    targets: { type: 'string', default: 'direct,floor,lean,next' },
    'in-place': { type: 'boolean', default: false },
    'profile-connections': { type: 'string', default: '50' },
    'profile-body': { type: 'string', default: 'chat' },
    // --profile: V8's sampling interval in µs (node's default 1000; e.g. 50 for the few-ms path of one stream).
    'profile-interval': { type: 'string' },
    'no-redis': { type: 'boolean', default: false },
    'ttfb-breakdown': { type: 'boolean', default: false },
    // --ttfb-breakdown: also a lean gateway from this bundle (A/B, interleaved stream by stream).
    compare: { type: 'string' },
    // The table: also a lean gateway with OpenTelemetry tracing on (A/B against the lean row).
    tracing: { type: 'boolean', default: false },
    // The table: also the lean gateway answering from the response cache (A/B against the lean row).
    'response-cache': { type: 'boolean', default: false },
    // --tracing: the OTLP encoding (http/protobuf or http/json).
    'tracing-protocol': { type: 'string', default: 'http/protobuf' },
    // --ttfb-breakdown: also a lean gateway of this build with these variables (NAME=value,...).
    'compare-env': { type: 'string' },
    // --ttfb-breakdown: streams per target per round, back to back (the first of each run not counted).
    'breakdown-run': { type: 'string', default: '1' },
    // --idle-gaps 0,5,20: sequential non-stream requests at c=1, each after that long idle (ms).
    'idle-gaps': { type: 'string' },
    // The table's floor: undici request (default), node:http, or undici's dispatcher (the gateway's own client).
    'floor-client': { type: 'string', default: 'undici' },
    // --footprint: memory per instance and latency under load, PostgreSQL setup against the embedded
    // default (and their GATEWAY_ONLY variants, and PGlite inline for A/B).
    footprint: { type: 'boolean', default: false },
    'footprint-setups': { type: 'string', default: 'pg,pg-gateway-only,embedded,embedded-inline,embedded-gateway-only' },
    'footprint-soak': { type: 'string', default: '25000' },
    'footprint-rounds': { type: 'string', default: '4' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(readFileSync(path.join(ROOT, 'bench/README.md'), 'utf8'));
  process.exit(0);
}
const C1_S = Number(opt['c1-seconds']);
const C50_S = Number(opt['c50-seconds']);
const WARM_S = Number(opt['warmup-seconds']);
const TTFB_N = Number(opt['ttfb-requests']);
const CHUNKS = Number(opt.chunks);
const CHUNK_MS = Number(opt['chunk-ms']);
const LONG_CHUNK_MS = Number(opt['stream-chunk-ms']);
const MODE = opt.footprint ? 'footprint' : opt.profile ? 'profile' : opt.soak || opt.streams || opt['ttfb-breakdown'] || opt['idle-gaps'] ? 'extra' : 'table';
if (!['undici', 'http', 'dispatch'].includes(opt['floor-client'])) {
  process.stderr.write('bench: --floor-client takes undici, http or dispatch\n');
  process.exit(2);
}
if (!['chat', 'chat64k', 'stream'].includes(opt['profile-body'])) {
  process.stderr.write('bench: --profile-body takes chat, chat64k or stream\n');
  process.exit(2);
}
if (opt.profile && !['lean', 'next'].includes(opt.profile)) {
  process.stderr.write('bench: --profile takes lean or next\n');
  process.exit(2);
}

// ---------------------------------------------------------------------------------------------
// Process bookkeeping: everything started here is stopped here (normal end, error, SIGINT).
// ---------------------------------------------------------------------------------------------
const children = new Set();
const tempDirs = [];

function note(msg) {
  const s = ((performance.now() - T0) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${s}s] ${msg}\n`);
}

function startChild(name, args, env, extra = {}, { duringCleanup = false } = {}) {
  if (interrupted && !duringCleanup) throw new Error('interrupted');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], ...extra });
  let output = '';
  let partial = '';
  // Warnings and errors the child logs (JSON log lines), counted by message.
  const warnings = new Map();
  const keep = (d) => {
    output += d;
    if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{') || !/"level":"(warn|error)"/.test(line)) continue;
      try {
        const j = JSON.parse(line);
        const key = `${j.level}: ${j.msg}${j.error ? ` (${String(j.error).slice(0, 160)})` : ''}`;
        warnings.set(key, (warnings.get(key) ?? 0) + 1);
      } catch {
        /* not a log line */
      }
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const entry = { name, child, output: () => output, warnings };
  children.add(entry);
  child.once('exit', () => children.delete(entry));
  return entry;
}

function stopChild(entry, graceMs = 15_000) {
  const { child } = entry;
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

async function stopAll() {
  await Promise.all([...children].map((e) => stopChild(e, 5_000)));
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.length = 0;
}

let interrupted = false;
/** Set once the benchmark account exists: removed again on every way out. */
let cleanupAccount;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    note(`${sig}: stopping everything this run started`);
    stopAll()
      .then(() => cleanupAccount?.())
      .catch(() => undefined)
      .finally(() => process.exit(130));
  });
}
process.on('exit', () => {
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** First stdout line of a child that prints {"url","port"} once listening. */
function readyLine(entry, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${entry.name} did not start:\n${entry.output()}`)), timeoutMs);
    const onData = (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      entry.child.stdout.off('data', onData);
      try {
        resolve(JSON.parse(buf.slice(0, nl)));
      } catch {
        reject(new Error(`${entry.name} printed an unexpected line: ${buf.slice(0, nl)}`));
      }
    };
    entry.child.stdout.on('data', onData);
    entry.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry.name} exited with ${code}:\n${entry.output()}`));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function runNode(args, env, timeoutMs = 120_000, duringCleanup = false) {
  return new Promise((resolve, reject) => {
    const entry = startChild(args.join(' '), args, env, {}, { duringCleanup });
    const timer = setTimeout(() => entry.child.kill('SIGKILL'), timeoutMs);
    entry.child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(entry.output());
      else reject(new Error(`\`node ${args.join(' ')}\` exited with ${code}:\n${entry.output()}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// /proc: CPU time and RSS of a process and its descendants
// ---------------------------------------------------------------------------------------------
// CPU of the shared services during the c=50 runs (they share this machine's cores with the proxy).
const SERVICE_PIDS = { redis: serverPid('redis-server'), postgres: serverPid('postgres') };

/** VmRSS of the process tree, in MB. */
function rssMb(pid) {
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

// ---------------------------------------------------------------------------------------------
// Load generation (autocannon) with exact latency percentiles
// ---------------------------------------------------------------------------------------------
let autocannon;
try {
  autocannon = (await import('autocannon')).default;
} catch {
  process.stderr.write('bench: autocannon is not installed (it is a dev dependency: run `npm install` once).\n');
  process.exit(2);
}

class Samples {
  constructor() {
    this.a = new Float64Array(1 << 16);
    this.n = 0;
  }
  push(v) {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  percentiles(...ps) {
    const s = this.a.slice(0, this.n).sort();
    return ps.map((p) => (this.n === 0 ? NaN : s[Math.min(this.n - 1, Math.max(0, Math.ceil((p / 100) * this.n) - 1))]));
  }
}

/**
 * One autocannon run. Latency percentiles are computed from every 2xx response time
 * (autocannon's own histogram has 1 ms resolution, too coarse for the c=1 comparison).
 * `cpuPids` are sampled around the run for CPU microseconds per request.
 */
function load({ url, headers, body, connections, seconds, amount, cpuPids = [], into = null }) {
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
        const cpu = cpuPids.map((p, i) => cpuMicros(p) - cpu0[i]);
        const ok = lat.n;
        const [p50, p99] = lat.percentiles(50, 99);
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

/** One request with node:http; resolves {status, body, ttfbMs, totalMs, reads, gaps}. */
function oneRequest(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const payload = Buffer.from(body);
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
        const chunks = [];
        // The time between consecutive reads of the body: a proxy that forwards each chunk as it
        // arrives shows the upstream's spacing, one that batches shows fewer reads, further apart.
        const gaps = [];
        res.on('data', (d) => {
          const now = performance.now();
          if (Number.isNaN(ttfb)) ttfb = now - t0;
          else gaps.push(now - last);
          last = now;
          chunks.push(d);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
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
    const t0 = performance.now();
    req.end(payload);
  });
}

/** Sequential streaming requests at c=1: time to first body byte. */
async function ttfbRun({ url, headers, body, n, warm = 10, cpuPids = [], done = 'data: [DONE]' }) {
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
    const [p50, p99] = lat.percentiles(50, 99);
    const [reads50] = reads.percentiles(50);
    const [gap50, gap99] = gaps.percentiles(50, 99);
    return { p50, p99, reads50, gap50, gap99, failures, firstFailure, cpuPerReq: cpuPids.map((p, i) => (cpuMicros(p) - cpu0[i]) / n) };
  } finally {
    agent.destroy();
  }
}

/** Checks one reply before loading a target, so a misconfiguration fails with a readable reason. */
async function probe(url, headers, body, check) {
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
    return `request failed: ${err.message}`;
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Set-up: build present, database and Redis, migrations, account, upstream, floor
// ---------------------------------------------------------------------------------------------
function preflight() {
  const missing = [];
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
function snapshotBuild(work) {
  if (opt['in-place']) return ROOT;
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
    if (after === id && existsSync(path.join(dir, '.next/BUILD_ID'))) return dir;
    if (attempt >= 5) throw new Error('the build in .next kept changing while it was being copied; run the benchmark when no build is running');
    note('the build changed while it was being copied; copying again');
  }
}

async function resolveServices() {
  const env = {};
  const notes = [];
  const pick = async (name, fallback, label) => {
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

const redactUrl = (u) => u.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');

/** The tests' operator config (tests/support/operator-config.mjs) with limits raised and a slow-stream model. */
function benchConfig(upstreamUrl) {
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

async function startUpstream(chunkMs) {
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
  return { ...entry, url, pid: entry.child.pid };
}

async function startFloor(upstreamUrl, client = 'undici') {
  const entry = startChild(`floor proxy (${client})`, ['bench/floor-proxy.mjs', '--upstream', upstreamUrl, '--client', client], process.env);
  const { url } = await readyLine(entry);
  return { ...entry, url, pid: entry.child.pid };
}

/**
 * The node flags an npm script runs the server with (`start`: `node FLAGS… dist/server.mjs`;
 * `start:gateway`: `GATEWAY_ONLY=1 node FLAGS… dist/server.mjs`, its variable set by the caller).
 */
function npmStartFlags(script = 'start') {
  const words = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
    .scripts[script].trim()
    .split(/\s+/);
  const start = words.slice(words.findIndex((w) => !/^[A-Z_]+=/.test(w)));
  if (start[0] !== 'node' || start.at(-1) !== 'dist/server.mjs') throw new Error(`unexpected npm ${script} script: ${words.join(' ')}`);
  return start.slice(1, -1);
}

/**
 * A lean gateway the way every measured one starts: with --expose-gc and METRICS_ALLOW_GC=1, so that
 * RSS can be read after a full GC (and so that gateways compared with each other start alike).
 */
function startMeasuredGateway(gatewayEnv, bundle = opt.server) {
  return startGateway('lean', { ...gatewayEnv, METRICS_ALLOW_GC: '1' }, ['--expose-gc'], bundle);
}

/** As startMeasuredGateway, the way `npm run start:gateway` runs it (GATEWAY_ONLY=1, its node flags). */
function startMeasuredGatewayOnly(gatewayEnv) {
  return startGateway('lean', { ...gatewayEnv, GATEWAY_ONLY: '1', METRICS_ALLOW_GC: '1' }, ['--expose-gc'], opt.server, 'start:gateway');
}

async function startGateway(mode, gatewayEnv, nodeFlags = [], bundle = opt.server, script = 'start') {
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
  return { ...entry, url, pid: entry.child.pid };
}

const BENCH_METRICS_TOKEN = 'bench-metrics-token';

/** A few gauges from the gateway's /metrics (NaN when unavailable). */
function gatewayGauges(baseUrl, { gc = false } = {}) {
  return new Promise((resolve) => {
    const none = { logQueue: NaN, limiterFallbacks: NaN, speculative: NaN };
    const req = http.get(`${baseUrl}/metrics${gc ? '?gc=1' : ''}`, { agent: false, headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const num = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
        resolve(
          res.statusCode === 200
            ? {
                logQueue: num('gateway_log_queue_length'),
                limiterFallbacks: num('gateway_limiter_fallback_total'),
                speculative: num('gateway_speculative_admissions_total'),
              }
            : none,
        );
      });
    });
    req.on('error', () => resolve(none));
    req.setTimeout(2000, () => req.destroy());
  });
}

function probeGet(url) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------
const CHAT = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello to the benchmark.' },
  ],
  max_tokens: 32,
  temperature: 0.2,
});
const CHAT_STREAM = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  max_tokens: 64,
  stream: true,
});
// The concurrent-streams check: a model served by the upstream's /long prefix (chunks --stream-chunk-ms apart).
const LONG_MODEL = 'bench-long-stream';
const CHAT_STREAM_LONG = JSON.stringify({
  model: LONG_MODEL,
  messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
  max_tokens: 64,
  stream: true,
});
const EMBED = JSON.stringify({ model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog.' });
// A long conversation (40 turns, ~64 KB): what a chat with history or retrieved context sends.
const CHAT_64K = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `Turn ${i}: ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(28)}`,
  })),
  max_tokens: 32,
});
const MESSAGES = JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] });
// The translated pairs: an OpenAI client on a Claude model, an Anthropic client on a GPT model.
const CHAT_ON_CLAUDE = JSON.stringify({ ...JSON.parse(CHAT), model: 'claude-haiku-4-5' });
const CHAT_STREAM_ON_CLAUDE = JSON.stringify({ ...JSON.parse(CHAT_STREAM), model: 'claude-haiku-4-5' });
const MESSAGES_ON_GPT = JSON.stringify({ ...JSON.parse(MESSAGES), model: 'gpt-4o-mini' });
const MESSAGES_STREAM = JSON.stringify({ ...JSON.parse(MESSAGES), stream: true });
const MESSAGES_STREAM_ON_GPT = JSON.stringify({ ...JSON.parse(MESSAGES), model: 'gpt-4o-mini', stream: true });
const isChat = (b) => JSON.parse(b).choices?.[0]?.message?.content !== undefined;
const isEmbedding = (b) => Array.isArray(JSON.parse(b).data?.[0]?.embedding);
const isMessage = (b) => JSON.parse(b).content?.[0]?.text !== undefined;
const isStream = (b) => b.includes('data: [DONE]');

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------
const fmt = {
  rps: (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  ms: (v) => (Number.isFinite(v) ? v.toFixed(2) : '—'),
  us: (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  mb: (v) => (Number.isFinite(v) ? v.toFixed(0) : '—'),
  pct: (v) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : '—'),
};

function table(headers, rows, align) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (align[i] === 'l' ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------
const failures = []; // any error, timeout or non-2xx, with where it happened

function recordRun(label, r) {
  if (r.errors || r.non2xx) failures.push(`${label}: ${r.errors} errors/timeouts, ${r.non2xx} non-2xx${r.bad.length ? ` (${r.bad.join(', ')})` : ''}`);
  if (r.requests === 0) failures.push(`${label}: no successful requests`);
  return r;
}

async function main() {
  preflight();
  const { env: services, notes } = await resolveServices();
  const work = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  tempDirs.push(work);
  buildDir = snapshotBuild(work);

  const upstream = await startUpstream(CHUNK_MS);
  const configFile = path.join(work, 'gateway.json');
  writeFileSync(configFile, JSON.stringify(benchConfig(upstream.url), null, 2));
  const inherited = { ...process.env };
  if (opt['no-redis']) delete inherited.REDIS_URL;
  const gatewayEnv = {
    ...inherited,
    ...services,
    GATEWAY_CONFIG: configFile,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_GATEWAY_LOG_LEVEL ?? 'warn',
    NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? 'bench-secret-bench-secret-bench-secret',
    SECRETS_KEY: process.env.SECRETS_KEY ?? 'b'.repeat(64),
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
    // Extra node flags for the gateway processes only (experiments, e.g. --max-old-space-size=256).
    ...(process.env.BENCH_GATEWAY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS } : {}),
    ...(services.DATABASE_URL ? {} : { DATA_DIR: path.join(work, 'data') }),
  };

  note('applying migrations (node --import tsx scripts/migrate.ts)');
  await runNode(['--import', 'tsx', 'scripts/migrate.ts'], gatewayEnv);
  note('creating the benchmark account (node --import tsx bench/setup-account.ts)');
  const accountOut = await runNode(['--import', 'tsx', 'bench/setup-account.ts'], gatewayEnv);
  const account = accountOut
    .split('\n')
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .find((j) => j?.apiKey);
  if (!account) throw new Error(`setup-account printed no key:\n${accountOut}`);
  const auth = { authorization: `Bearer ${account.apiKey}` };
  const anthropicAuth = { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01' };

  const header = [
    `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${os.platform()} ${os.release()}`,
    ...notes,
    `upstream: ${opt['upstream-delay-ms']} ms reply delay; streams of ${CHUNKS} chunks, ${CHUNK_MS} ms apart (${LONG_CHUNK_MS} ms in the concurrent-streams check)`,
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}${os.loadavg()[0] > os.cpus().length / 2 ? '  (busy machine: numbers are noisy)' : ''}`,
  ];

  let cleaned = false;
  cleanupAccount = async () => {
    if (cleaned || opt['keep-data']) return;
    cleaned = true;
    note('removing the benchmark account and its request logs');
    await runNode(['--import', 'tsx', 'bench/setup-account.ts', '--cleanup', account.userId], gatewayEnv, 60_000, true).catch((err) =>
      note(`cleanup failed: ${err.message}`),
    );
  };
  try {
    if (MODE === 'table') await runTable({ upstream, gatewayEnv, auth, anthropicAuth, header });
    else if (MODE === 'footprint') await runFootprint({ gatewayEnv, auth, header, work });
    else if (MODE === 'profile') await runProfile({ gatewayEnv, auth, header });
    else await runExtra({ upstream, gatewayEnv, auth, header });
  } finally {
    if (!interrupted) await cleanupAccount();
  }
}

async function loadTarget(target, spec) {
  const label = `${target.label}, c=${spec.connections}`;
  note(`${label}: ${spec.seconds ? `${spec.seconds} s` : `${spec.amount} requests`}`);
  return recordRun(label, await load(spec));
}

/** An OTLP/HTTP receiver that accepts and drops every export (--tracing): its own CPU is the bench's, not the gateway's. */
async function startOtlpSink() {
  const sink = { url: '', exports: 0, bytes: 0, close: () => new Promise((r) => server.close(() => r())) };
  const server = http.createServer((req, res) => {
    req.on('data', (c) => (sink.bytes += c.length));
    req.on('end', () => {
      sink.exports++;
      const json = String(req.headers['content-type']).includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `http://127.0.0.1:${server.address().port}`;
  return sink;
}

async function runTable({ upstream, gatewayEnv, auth, anthropicAuth, header }) {
  const floor = await startFloor(upstream.url, opt['floor-client']);
  const chatPath = '/v1/chat/completions';
  const wantedExtra = new Set();
  const targets = [
    { key: 'direct', label: 'direct (upstream)', auth: {}, start: async () => upstream, own: false },
    {
      key: 'floor',
      label: opt['floor-client'] === 'undici' ? 'floor proxy' : `floor proxy (${opt['floor-client']})`,
      auth: {},
      start: async () => floor,
      own: false,
    },
    {
      key: 'lean',
      label: opt.server === 'dist/server.mjs' ? 'gateway, lean /v1 (npm start)' : `gateway, lean /v1 (${path.basename(opt.server)})`,
      auth,
      start: () => startMeasuredGateway(gatewayEnv),
      own: true,
    },
    {
      key: 'next',
      label: 'gateway, route handlers (next start)',
      auth,
      start: () => startGateway('next', { ...gatewayEnv, NEXT_MANUAL_SIG_HANDLE: '1' }),
      own: true,
    },
  ];
  // A/B in one run: --compare FILE measures another bundle of server.ts (e.g. the previous build) right after the lean row.
  if (opt.compare) {
    const at = targets.findIndex((t) => t.key === 'lean') + 1 || targets.length;
    targets.splice(at, 0, {
      key: 'compare',
      label: `gateway, lean /v1 (${path.basename(opt.compare)})`,
      auth,
      // Without the config keys an older build would refuse as unknown (channel_health came in with
      // channel health; the fixture sets it only to keep health from judging, which an older build never does).
      start: () => {
        const older = path.join(path.dirname(gatewayEnv.GATEWAY_CONFIG), 'gateway-compare.json');
        const { channel_health: _unknownToOlderBuilds, ...rest } = JSON.parse(readFileSync(gatewayEnv.GATEWAY_CONFIG, 'utf8'));
        writeFileSync(older, JSON.stringify(rest, null, 2));
        return startMeasuredGateway({ ...gatewayEnv, GATEWAY_CONFIG: older }, opt.compare);
      },
      own: true,
    });
    wantedExtra.add('compare');
  }
  // A/B in one run: --response-cache measures the same build answering every request from the
  // response cache (x-service-cache; the benchmark's body never changes, so all but the first are
  // hits), right after the lean row: CPU per request of a hit against a proxied request.
  if (opt['response-cache']) {
    const at = targets.findIndex((t) => t.key === 'lean') + 1 || targets.length;
    targets.splice(at, 0, {
      key: 'cached',
      label: 'gateway, lean /v1, response cache hits',
      auth: { ...auth, 'x-service-cache': 'ttl=3600' },
      start: () => startMeasuredGateway(gatewayEnv),
      own: true,
    });
    wantedExtra.add('cached');
  }
  // A/B in one run: --tracing measures the same build with OpenTelemetry tracing on, right after the lean row.
  const sink = opt.tracing ? await startOtlpSink() : null;
  if (sink) {
    const at = targets.findIndex((t) => t.key === 'lean') + 1 || targets.length;
    targets.splice(at, 0, {
      key: 'traced',
      label: `gateway, lean /v1, tracing on (OTLP ${opt['tracing-protocol']})`,
      auth,
      start: () =>
        startMeasuredGateway({
          ...gatewayEnv,
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: opt['tracing-protocol'],
          OTEL_TRACES_SAMPLER: 'always_on',
        }),
      own: true,
    });
    wantedExtra.add('traced');
  }
  const wanted = new Set([...opt.targets.split(',').map((t) => t.trim()), ...wantedExtra]);
  for (let i = targets.length - 1; i >= 0; i--) if (!wanted.has(targets[i].key)) targets.splice(i, 1);
  const rows = {};
  const ttfb = {};
  const extra = {};
  const gatewayWarnings = [];
  let soak = null;
  let streams = null;

  for (const t of targets) {
    if (interrupted) return;
    const row = (rows[t.key] = { label: t.label });
    let proc;
    try {
      note(`starting ${t.label}`);
      proc = await t.start();
    } catch (err) {
      row.error = err.message.split('\n')[0];
      failures.push(`${t.label}: did not start: ${err.message.slice(0, 2000)}`);
      continue;
    }
    try {
      const url = proc.url + chatPath;
      const problem = await probe(url, t.auth, CHAT, isChat);
      if (problem) {
        row.error = problem;
        failures.push(`${t.label}: ${problem}`);
        continue;
      }
      // The process whose CPU and memory are measured: the proxy (for direct: the upstream itself).
      const pid = proc.pid;
      note(`${t.label}: warm-up ${WARM_S} s at c=50`);
      await load({ url, headers: t.auth, body: CHAT, connections: 50, seconds: WARM_S });
      await sleep(300);
      row.rssBefore = rssMb(pid);
      row.c1 = await loadTarget(t, { url, headers: t.auth, body: CHAT, connections: 1, seconds: C1_S, cpuPids: [pid] });
      await sleep(300);
      row.c50 = await loadTarget(t, {
        url,
        headers: t.auth,
        body: CHAT,
        connections: 50,
        seconds: C50_S,
        cpuPids: [pid, upstream.pid, SERVICE_PIDS.redis ?? 0, SERVICE_PIDS.postgres ?? 0],
      });
      if (t.own) row.gauges = await gatewayGauges(proc.url);
      await sleep(300);

      note(`${t.label}: streaming TTFB, ${TTFB_N} sequential streams`);
      const tt = (ttfb[t.key] = await ttfbRun({ url, headers: t.auth, body: CHAT_STREAM, n: TTFB_N, cpuPids: [pid] }));
      if (tt.failures) failures.push(`${t.label}, streaming: ${tt.failures} of ${TTFB_N} streams failed (${tt.firstFailure})`);

      if (t.key === 'lean') {
        for (const [key, p, body, headers, check] of [
          ['embeddings', '/v1/embeddings', EMBED, auth, isEmbedding],
          ['anthropic', '/v1/anthropic/v1/messages', MESSAGES, anthropicAuth, isMessage],
          ['chat64k', '/v1/chat/completions', CHAT_64K, auth, isChat],
          ['openaiToAnthropic', chatPath, CHAT_ON_CLAUDE, auth, isChat],
          ['anthropicToOpenai', '/v1/anthropic/v1/messages', MESSAGES_ON_GPT, anthropicAuth, isMessage],
        ]) {
          const eurl = proc.url + p;
          const problem2 = await probe(eurl, headers, body, check);
          if (problem2) {
            extra[key] = { error: problem2 };
            failures.push(`${t.label}, ${p}: ${problem2}`);
            continue;
          }
          await load({ url: eurl, headers, body, connections: 50, seconds: 1 });
          extra[key] = await loadTarget({ label: `${t.label} ${p}` }, { url: eurl, headers, body, connections: 50, seconds: C50_S, cpuPids: [pid] });
        }
      }
      if (t.key === 'lean') {
        // Stream TTFB of the Anthropic surface and of the translated pairs (the identity chat stream is the main table's).
        for (const [key, p, body, headers, done] of [
          ['anthropic', '/v1/anthropic/v1/messages', MESSAGES_STREAM, anthropicAuth, 'message_stop'],
          ['openaiToAnthropic', chatPath, CHAT_STREAM_ON_CLAUDE, auth, 'data: [DONE]'],
          ['anthropicToOpenai', '/v1/anthropic/v1/messages', MESSAGES_STREAM_ON_GPT, anthropicAuth, 'message_stop'],
        ]) {
          if (!extra[key] || extra[key].error) continue;
          const st = await ttfbRun({ url: proc.url + p, headers, body, n: TTFB_N, cpuPids: [pid], done });
          extra[key].ttfb = st;
          if (st.failures) failures.push(`${t.label}, ${key} streaming: ${st.failures} of ${TTFB_N} streams failed (${st.firstFailure})`);
        }
      }
      await sleep(300);
      row.rssAfter = rssMb(pid);
      if (t.key === 'lean' && !opt['skip-soak']) {
        note(`${t.label}: soak, ${Number(opt['soak-requests']).toLocaleString('en-US')} requests at c=50 (RSS growth)`);
        soak = await soakRun(proc, url, t.auth);
      }
      const nStreams = Number(opt['table-streams']);
      if (t.key === 'lean' && nStreams > 0) streams = await concurrentStreams(nStreams, upstream, floor, proc, t.auth);
    } catch (err) {
      row.error = err.message.split('\n')[0];
      failures.push(`${t.label}: ${err.message}`);
    } finally {
      if (t.own && proc) {
        note(`stopping ${t.label}`);
        const code = await stopChild(proc);
        gatewayWarnings.push([t.label, proc.warnings]);
        // next start runs as `npm run start:next` does (NEXT_MANUAL_SIG_HANDLE=1): the gateway drains and exits 0.
        if (code !== 0 && code !== null) failures.push(`${t.label}: exited with ${code} on SIGTERM:\n${proc.output().slice(-2000)}`);
      }
    }
  }

  // ---- the table ----
  const out = [];
  out.push('', `Gateway benchmark — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`));
  out.push(`  runs: POST /v1/chat/completions (non-stream), warm-up ${WARM_S} s, c=1 for ${C1_S} s, c=50 for ${C50_S} s; latency = client-side, per request`);
  out.push('');
  const H = [
    'target',
    'c=1 req/s',
    'p50 ms',
    'p99 ms',
    'c=50 req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req c=1',
    'c=50',
    'RSS MB before',
    'after',
    'growth',
    'TTFB p50 ms',
    'p99 ms',
  ];
  const body = targets.map(({ key }) => {
    const r = rows[key];
    const tt = ttfb[key] ?? {};
    if (r.error && !r.c50) return [r.label, `FAILED: ${r.error.slice(0, 100)}`, '', '', '', '', '', '', '', '', '', '', '', ''];
    return [
      r.label,
      fmt.rps(r.c1?.rps),
      fmt.ms(r.c1?.p50),
      fmt.ms(r.c1?.p99),
      fmt.rps(r.c50?.rps),
      fmt.ms(r.c50?.p50),
      fmt.ms(r.c50?.p99),
      fmt.us(r.c1?.cpuPerReq[0]),
      fmt.us(r.c50?.cpuPerReq[0]),
      fmt.mb(r.rssBefore),
      fmt.mb(r.rssAfter),
      fmt.pct(((r.rssAfter - r.rssBefore) / r.rssBefore) * 100),
      fmt.ms(tt.p50),
      fmt.ms(tt.p99),
    ];
  });
  out.push(table(H, body, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']));
  out.push(
    `  CPU/RSS: the proxy process (direct: the upstream process itself). TTFB: ${TTFB_N} sequential streams of ${CHUNKS} chunks × ${CHUNK_MS} ms at c=1.`,
  );
  const upCpu = targets.filter((t) => rows[t.key].c50).map((t) => `${t.key} ${fmt.us(rows[t.key].c50.cpuPerReq[1])}`);
  out.push(`  upstream CPU µs/req during the c=50 runs: ${upCpu.join(', ')}`);
  const svc = (i) =>
    targets.filter((t) => rows[t.key].c50 && Number.isFinite(rows[t.key].c50.cpuPerReq[i])).map((t) => `${t.key} ${fmt.us(rows[t.key].c50.cpuPerReq[i])}`);
  if (SERVICE_PIDS.redis) out.push(`  local Redis CPU µs/req during the c=50 runs: ${svc(2).join(', ')}`);
  if (SERVICE_PIDS.postgres) out.push(`  local PostgreSQL CPU µs/req (all backends) during the c=50 runs: ${svc(3).join(', ')}`);
  const queues = targets
    .filter((t) => rows[t.key].gauges)
    .map((t) => `${t.key} ${rows[t.key].gauges.logQueue} rows queued, ${rows[t.key].gauges.limiterFallbacks} limiter calls answered in-process`);
  if (queues.length) out.push(`  gateway /metrics right after the c=50 run: ${queues.join('; ')}`);
  out.push('');
  const eh = ['lean /v1 path, c=50', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'stream TTFB p50 ms', 'p99 ms'];
  const erows = [
    ['POST /v1/embeddings (1536 dims)', extra.embeddings],
    ['POST /v1/anthropic/v1/messages (Claude model: identity)', extra.anthropic],
    [`POST /v1/chat/completions (${Math.round(CHAT_64K.length / 1024)} KB body)`, extra.chat64k],
    ['OpenAI chat -> Anthropic channel (Claude model)', extra.openaiToAnthropic],
    ['Anthropic Messages -> OpenAI channel (GPT model)', extra.anthropicToOpenai],
  ].map(([name, r]) =>
    r?.error || !r
      ? [name, `FAILED: ${(r?.error ?? 'not run').slice(0, 100)}`, '', '', '', '', '']
      : [name, fmt.rps(r.rps), fmt.ms(r.p50), fmt.ms(r.p99), fmt.us(r.cpuPerReq[0]), fmt.ms(r.ttfb?.p50), fmt.ms(r.ttfb?.p99)],
  );
  if (rows.lean) out.push(table(eh, erows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']));

  if (rows.lean?.c50 && rows.compare?.c50) {
    const a = rows.lean;
    const b = rows.compare;
    out.push(
      `  A/B, this build vs ${path.basename(opt.compare)}: c=50 throughput ${((a.c50.rps / b.c50.rps) * 100).toFixed(0)}%, ` +
        `CPU/request ${(a.c50.cpuPerReq[0] / b.c50.cpuPerReq[0]).toFixed(2)}x, c=1 p50 ${fmt.ms(a.c1.p50 - b.c1.p50)} ms, ` +
        `stream TTFB p50 ${fmt.ms((ttfb.lean?.p50 ?? NaN) - (ttfb.compare?.p50 ?? NaN))} ms`,
    );
  }

  if (rows.lean?.c50 && rows.traced?.c50) {
    const a = rows.lean;
    const b = rows.traced;
    const us = (x, y) => `${fmt.us(x)} -> ${fmt.us(y)} µs (${y >= x ? '+' : ''}${fmt.us(y - x)}, ${((y / x - 1) * 100).toFixed(0)}%)`;
    out.push(
      `  Tracing off -> on (every request sampled, ${sink.exports} OTLP exports, ${(sink.bytes / 2 ** 20).toFixed(1)} MB received): ` +
        `CPU/request c=1 ${us(a.c1.cpuPerReq[0], b.c1.cpuPerReq[0])}, c=50 ${us(a.c50.cpuPerReq[0], b.c50.cpuPerReq[0])}; ` +
        `c=50 throughput ${((b.c50.rps / a.c50.rps) * 100).toFixed(0)}%; stream TTFB p50 ${fmt.ms(ttfb.lean?.p50)} -> ${fmt.ms(ttfb.traced?.p50)} ms`,
    );
  }
  await sink?.close();

  // ---- targets ----
  const d = rows.direct ?? {};
  const f = rows.floor ?? {};
  const checks = [];
  const check = (name, gw, value, limit, pass, show) => checks.push({ name, gw, value, limit, pass, show });
  const gwKeys = ['lean', 'next'].filter((k) => rows[k]);
  for (const key of gwKeys) {
    const g = rows[key];
    const name = key;
    const ok = (x) => x !== undefined && Number.isFinite(x);
    const thr = g.c50 && f.c50 ? g.c50.rps / f.c50.rps : NaN;
    check(
      'throughput c=50 >= 60% of floor',
      name,
      thr,
      '>= 60%',
      ok(thr) && thr >= 0.6,
      `${(thr * 100).toFixed(0)}% (${fmt.rps(g.c50?.rps)} vs ${fmt.rps(f.c50?.rps)} req/s)`,
    );
    const cpu = g.c50 && f.c50 ? g.c50.cpuPerReq[0] / f.c50.cpuPerReq[0] : NaN;
    check(
      'CPU/request <= 1.7x floor',
      name,
      cpu,
      '<= 1.7x',
      ok(cpu) && cpu <= 1.7,
      `${cpu.toFixed(2)}x (${fmt.us(g.c50?.cpuPerReq[0])} vs ${fmt.us(f.c50?.cpuPerReq[0])} µs)`,
    );
    const a50 = g.c1 && d.c1 ? g.c1.p50 - d.c1.p50 : NaN;
    check('added latency c=1 p50 < 1 ms', name, a50, '< 1 ms', ok(a50) && a50 < 1, `${fmt.ms(a50)} ms`);
    const a99 = g.c1 && d.c1 ? g.c1.p99 - d.c1.p99 : NaN;
    check('added latency c=1 p99 < 5 ms', name, a99, '< 5 ms', ok(a99) && a99 < 5, `${fmt.ms(a99)} ms`);
    const t50 = ttfb[key] && ttfb.direct ? ttfb[key].p50 - ttfb.direct.p50 : NaN;
    check(
      'streaming added TTFB p50 < 1 ms',
      name,
      t50,
      '< 1 ms',
      ok(t50) && t50 < 1,
      `${fmt.ms(t50)} ms (p99 ${fmt.ms(ttfb[key]?.p99 - ttfb.direct?.p99)} ms)`,
    );
    // Chunks forwarded as they arrive: as many reads of the body per stream as straight from the
    // upstream, and the same spacing between them (a proxy that batched would show fewer, further apart).
    const tg = ttfb[key];
    const td = ttfb.direct;
    if (tg && td) {
      const asTheyArrive = tg.reads50 >= td.reads50 && tg.gap50 <= td.gap50 + 1;
      check(
        'stream chunks forwarded as they arrive',
        name,
        tg.reads50,
        `>= ${td.reads50} reads`,
        asTheyArrive,
        `${tg.reads50} reads/stream, gap p50 ${fmt.ms(tg.gap50)} ms (direct ${td.reads50}, ${fmt.ms(td.gap50)} ms)`,
      );
    }
    if (key === 'lean' && soak) {
      check(
        'RSS growth over 100k requests < 10%',
        name,
        soak.growth,
        '< 10%',
        soak.pass,
        `${fmt.pct(soak.growth * 100)} (${fmt.mb(soak.before)} → ${fmt.mb(soak.after)} MB)`,
      );
    } else {
      const rss = (g.rssAfter - g.rssBefore) / g.rssBefore;
      check(
        'RSS growth over 100k requests < 10%',
        name,
        rss,
        '< 10%',
        ok(rss) && rss < 0.1,
        `over the table's runs: ${fmt.pct(rss * 100)} (${fmt.mb(g.rssBefore)} → ${fmt.mb(g.rssAfter)} MB)`,
      );
    }
    if (key === 'lean' && streams?.results.lean) {
      const { n, ok: done, wall } = streams.results.lean;
      check(
        `${n.toLocaleString('en-US')} concurrent streams served`,
        name,
        done,
        `${n} of ${n}`,
        done === n,
        `${done}/${n} in ${wall.toFixed(2)} s (direct ${streams.results.direct?.wall.toFixed(2) ?? '—'} s, floor ${streams.results.floor?.wall.toFixed(2) ?? '—'} s)`,
      );
    }
  }
  out.push('', 'Targets (the lean path is what `npm start` serves; next start shown for comparison)');
  const tgtRows = [];
  for (const name of [...new Set(checks.map((c) => c.name))]) {
    const row = [name];
    for (const key of gwKeys) {
      const c = checks.find((x) => x.name === name && x.gw === key);
      if (!c) row.push('—', 'not measured');
      else row.push(c.pass ? 'PASS' : 'FAIL', c.show);
    }
    tgtRows.push(row);
  }
  const tgtHead = ['target', ...gwKeys.flatMap((k) => [k === 'lean' ? 'lean' : 'next start', 'measured'])];
  if (tgtRows.length)
    out.push(
      table(
        tgtHead,
        tgtRows,
        tgtHead.map(() => 'l'),
      ),
    );
  if (soak) out.push('', ...soakLines(soak));
  if (streams) out.push('', ...streams.lines);
  out.push(...warningLines(gatewayWarnings));
  process.stdout.write(`${out.join('\n')}\n`);
  targetsMissed = checks.filter((c) => c.gw === 'lean' && !c.pass).length;
}

/** process.memoryUsage() of a gateway, from its /metrics, in MB (after a full GC when `gc`). */
function memoryGauges(baseUrl, { gc = false } = {}) {
  return new Promise((resolve) => {
    const req = http.get(`${baseUrl}/metrics${gc ? '?gc=1' : ''}`, { agent: false, headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const mb = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576;
        const ms = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
        resolve({
          heapUsed: mb('nodejs_heap_used_bytes'),
          heapTotal: mb('nodejs_heap_total_bytes'),
          external: mb('nodejs_external_memory_bytes'),
          loopP99: ms('nodejs_eventloop_delay_p99_seconds'),
          loopMax: ms('nodejs_eventloop_delay_max_seconds'),
        });
      });
    });
    req.on('error', () => resolve({}));
    req.setTimeout(5000, () => req.destroy());
  });
}

/** RSS of the process tree after two full GCs (the gateway runs with --expose-gc, METRICS_ALLOW_GC=1), with the heap breakdown. */
async function settledMemory(gw) {
  let heap = {};
  for (let i = 0; i < 2; i++) {
    heap = await memoryGauges(gw.url, { gc: true });
    await sleep(750);
  }
  return { rss: rssMb(gw.pid), ...heap };
}

/**
 * --footprint: per setup, one gateway process: RSS at idle right after start (before any request),
 * after the warm-up, and after the c=50 runs and the soak; latency, CPU and the longest event-loop
 * stall of the c=50 runs and of the soak. Setups: `pg` (npm start with PostgreSQL and Redis),
 * `embedded` (no DATABASE_URL/REDIS_URL: PGlite in its worker thread, the default),
 * `embedded-inline` (PGLITE_MODE=inline: PGlite on the request thread, as before), and the
 * `-gateway-only` variants (GATEWAY_ONLY=1: no Next.js). All setups run at once (each embedded one
 * on its own DATA_DIR) and the load is interleaved: --footprint-rounds rounds, each giving every
 * setup C50_S/rounds seconds at c=50 and soak/rounds requests, in rotating order, so a busy moment
 * of a shared machine does not land on one setup only.
 */
async function runFootprint({ gatewayEnv, auth, header, work }) {
  const soakN = Number(opt['footprint-soak']);
  const rounds = Math.max(1, Number(opt['footprint-rounds']));
  const embedded = async (name, extra) => {
    const env = { ...gatewayEnv, DATA_DIR: path.join(work, `data-${name}`), ...extra };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    note(`${name}: migrations and the benchmark account on its own embedded database`);
    await runNode(['--import', 'tsx', 'scripts/migrate.ts'], env);
    const out = await runNode(['--import', 'tsx', 'bench/setup-account.ts'], env);
    const line = out.split('\n').find((l) => l.includes('"apiKey"'));
    if (!line) throw new Error(`setup-account printed no key:\n${out}`);
    return { env, headers: { authorization: `Bearer ${JSON.parse(line).apiKey}` } };
  };
  const all = {
    pg: { label: 'PostgreSQL + Redis, npm start', prepare: async () => ({ env: gatewayEnv, headers: auth }), needs: 'pg' },
    'pg-gateway-only': {
      label: 'PostgreSQL + Redis, GATEWAY_ONLY=1',
      prepare: async () => ({ env: { ...gatewayEnv, GATEWAY_ONLY: '1' }, headers: auth }),
      needs: 'pg',
    },
    embedded: { label: 'embedded (PGlite thread), npm start', prepare: () => embedded('embedded', {}) },
    'embedded-inline': { label: 'embedded, PGLITE_MODE=inline', prepare: () => embedded('embedded-inline', { PGLITE_MODE: 'inline' }) },
    'embedded-gateway-only': { label: 'embedded (PGlite thread), GATEWAY_ONLY=1', prepare: () => embedded('embedded-gateway-only', { GATEWAY_ONLY: '1' }) },
  };
  const keys = opt['footprint-setups']
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of keys) if (!all[k]) throw new Error(`--footprint-setups: unknown setup ${k} (known: ${Object.keys(all).join(', ')})`);
  const rows = {};
  const live = [];
  const warnings = [];
  const newRun = () => ({ lat: new Samples(), requests: 0, wall: 0, cpu: 0, loopMax: 0, errors: 0 });
  const summarize = (r) => {
    const [p50, p99] = r.lat.percentiles(50, 99);
    return { requests: r.requests, rps: r.requests / r.wall, p50, p99, cpuPerReq: [r.requests ? r.cpu / r.requests : NaN], loopMax: r.loopMax };
  };
  try {
    for (const key of keys) {
      if (interrupted) return;
      const setup = all[key];
      const row = (rows[key] = { label: setup.label });
      if (setup.needs === 'pg' && !gatewayEnv.DATABASE_URL) {
        row.error = 'no PostgreSQL reachable';
        continue;
      }
      try {
        const { env, headers } = await setup.prepare();
        note(`starting ${setup.label}`);
        const gw = env.GATEWAY_ONLY === '1' ? await startMeasuredGatewayOnly(env) : await startMeasuredGateway(env);
        live.push({ key, gw, headers, url: gw.url + '/v1/chat/completions' });
        await sleep(1000);
        row.start = await settledMemory(gw);
        const problem = await probe(gw.url + '/v1/chat/completions', headers, CHAT, isChat);
        if (problem) throw new Error(problem);
        note(`${setup.label}: warm-up ${WARM_S} s at c=50`);
        await load({ url: gw.url + '/v1/chat/completions', headers, body: CHAT, connections: 50, seconds: WARM_S });
        await sleep(1500); // the request-log writer drains
        row.warm = await settledMemory(gw);
        row.c50run = newRun();
        row.soakRun = newRun();
        row.peak = 0;
      } catch (err) {
        row.error = err.message.split('\n')[0];
        failures.push(`${setup.label}: ${err.message.slice(0, 2000)}`);
      }
    }
    const ready = live.filter((l) => !rows[l.key].error);
    const sampler = setInterval(() => {
      for (const l of ready) rows[l.key].peak = Math.max(rows[l.key].peak, rssMb(l.gw.pid));
    }, 500);
    try {
      for (const phase of ['c50run', 'soakRun']) {
        for (let round = 0; round < rounds; round++) {
          if (interrupted) return;
          const order = ready.map((_, i) => ready[(i + round) % ready.length]);
          note(
            `${phase === 'c50run' ? `c=50, ${(C50_S / rounds).toFixed(1)} s` : `soak, ${Math.round(soakN / rounds).toLocaleString('en-US')} requests at c=50`} per setup, round ${round + 1} of ${rounds}`,
          );
          for (const l of order) {
            const acc = rows[l.key][phase];
            await memoryGauges(l.gw.url); // resets the event-loop delay histogram
            const spec = {
              url: l.url,
              headers: l.headers,
              body: CHAT,
              connections: 50,
              cpuPids: [l.gw.pid],
              into: acc.lat,
              ...(phase === 'c50run' ? { seconds: C50_S / rounds } : { amount: Math.round(soakN / rounds) }),
            };
            const r = recordRun(`${rows[l.key].label}, ${phase === 'c50run' ? 'c=50' : 'soak'}`, await load(spec));
            const g = await memoryGauges(l.gw.url);
            acc.requests += r.requests;
            acc.wall += r.wall;
            acc.cpu += r.cpuPerReq[0] * r.requests;
            acc.loopMax = Math.max(acc.loopMax, g.loopMax || 0);
            await sleep(200);
          }
        }
      }
    } finally {
      clearInterval(sampler);
    }
    await sleep(2000); // the request-log writers drain
    for (const l of ready) {
      const row = rows[l.key];
      row.c50 = summarize(row.c50run);
      row.soak = summarize(row.soakRun);
      row.after = await settledMemory(l.gw);
    }
  } finally {
    for (const l of live) {
      note(`stopping ${rows[l.key].label}`);
      const code = await stopChild(l.gw);
      warnings.push([rows[l.key].label, l.gw.warnings]);
      if (code !== 0 && code !== null) failures.push(`${rows[l.key].label}: exited with ${code} on SIGTERM:\n${l.gw.output().slice(-2000)}`);
    }
  }

  const out = ['', `Gateway footprint — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`)];
  out.push(
    `  every setup is its own process, all running at once; RSS of the process tree after two full GCs: at idle after start, after a ${WARM_S} s warm-up at c=50, after the c=50 runs (${C50_S} s) and the soak (${soakN.toLocaleString('en-US')} requests), both interleaved across setups in ${rounds} rounds`,
  );
  out.push('');
  const H = [
    'setup',
    'RSS MB start',
    'warm',
    'after soak',
    'peak',
    'heap MB after',
    'c=50 req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'loop max ms',
    'soak req/s',
    'p99 ms',
    'loop max ms',
  ];
  const body = keys.map((k) => {
    const r = rows[k];
    if (!r.c50) return [r.label, `FAILED: ${(r.error ?? '').slice(0, 100)}`, ...H.slice(2).map(() => '')];
    return [
      r.label,
      fmt.mb(r.start?.rss),
      fmt.mb(r.warm?.rss),
      fmt.mb(r.after?.rss),
      fmt.mb(r.peak),
      fmt.mb(r.after?.heapUsed),
      fmt.rps(r.c50.rps),
      fmt.ms(r.c50.p50),
      fmt.ms(r.c50.p99),
      fmt.us(r.c50.cpuPerReq[0]),
      fmt.ms(r.c50.loopMax),
      fmt.rps(r.soak.rps),
      fmt.ms(r.soak.p99),
      fmt.ms(r.soak.loopMax),
    ];
  });
  out.push(table(H, body, ['l', ...H.slice(1).map(() => 'r')]));
  out.push("  loop max: the longest the gateway's event loop was held during those runs (monitorEventLoopDelay, from /metrics)");
  out.push(
    "  external memory (ArrayBuffers; PGlite's WebAssembly memory when inline) after the soak: " +
      keys
        .filter((k) => rows[k].after)
        .map((k) => `${k} ${fmt.mb(rows[k].after.external)} MB`)
        .join(', '),
  );

  const checks = [];
  const ratio = (a, b) => (a && b ? a / b : NaN);
  const pg = rows.pg?.c50;
  for (const k of ['embedded', 'embedded-gateway-only', 'embedded-inline']) {
    const e = rows[k]?.c50;
    if (!e || !pg) continue;
    const x = ratio(e.p99, pg.p99);
    checks.push([`c=50 p99 ${k} within 2x of pg`, x <= 2, `${x.toFixed(2)}x (${fmt.ms(e.p99)} vs ${fmt.ms(pg.p99)} ms)`]);
    const xs = ratio(rows[k].soak?.p99, rows.pg.soak?.p99);
    checks.push([`soak p99 ${k} within 2x of pg`, xs <= 2, `${xs.toFixed(2)}x (${fmt.ms(rows[k].soak?.p99)} vs ${fmt.ms(rows.pg.soak?.p99)} ms)`]);
  }
  if (rows['pg-gateway-only']?.warm)
    checks.push([
      'GATEWAY_ONLY=1 with PostgreSQL+Redis idle RSS < 150 MB',
      rows['pg-gateway-only'].warm.rss < 150,
      `${fmt.mb(rows['pg-gateway-only'].start.rss)} MB idle after start, ${fmt.mb(rows['pg-gateway-only'].warm.rss)} MB idle after warm-up`,
    ]);
  if (rows['embedded-gateway-only']?.warm)
    checks.push([
      'GATEWAY_ONLY=1 embedded idle RSS < 300 MB',
      rows['embedded-gateway-only'].warm.rss < 300,
      `${fmt.mb(rows['embedded-gateway-only'].start.rss)} MB idle after start, ${fmt.mb(rows['embedded-gateway-only'].warm.rss)} MB idle after warm-up`,
    ]);
  for (const [a, b] of [
    ['pg-gateway-only', 'pg'],
    ['embedded', 'embedded-inline'],
    ['embedded-gateway-only', 'embedded'],
  ]) {
    const ra = rows[a]?.c50;
    const rb = rows[b]?.c50;
    if (!ra || !rb) continue;
    checks.push([
      `${a} vs ${b}: throughput, CPU/request (A/B)`,
      ra.rps >= rb.rps * 0.9 && ra.cpuPerReq[0] <= rb.cpuPerReq[0] * 1.1,
      `${fmt.pct((ra.rps / rb.rps - 1) * 100)} req/s, ${fmt.pct((ra.cpuPerReq[0] / rb.cpuPerReq[0] - 1) * 100)} CPU µs/req (within 10% passes)`,
    ]);
  }
  if (checks.length)
    out.push(
      '',
      table(
        ['target', '', 'measured'],
        checks.map(([n, p, m]) => [n, p ? 'PASS' : 'FAIL', m]),
        ['l', 'l', 'l'],
      ),
    );
  out.push(...warningLines(warnings));
  process.stdout.write(`${out.join('\n')}\n`);
  targetsMissed += checks.filter((c) => !c[1]).length;
}

function warningLines(list) {
  const out = [];
  for (const [label, warnings] of list) {
    if (warnings.size === 0) continue;
    out.push('', `${label} logged warnings/errors during the run (count × message):`);
    for (const [msg, n] of [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 8)) out.push(`  ${String(n).padStart(6)} × ${msg}`);
  }
  return out;
}

/**
 * RSS over a long run: `--soak-requests` (100,000) requests at c=50 on an already warm gateway,
 * RSS read after a short pause before and after (and every second in between).
 */
async function soakRun(gw, url, auth) {
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
  const samples = [];
  const queues = [];
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

function soakLines({ r, before, after, growth, peak, samples, queues }) {
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

/**
 * N concurrent streams (chunks --stream-chunk-ms apart, from the upstream's /long prefix), first
 * straight at the upstream, then through the floor proxy (what proxying alone costs), then through
 * the lean gateway: all must complete. Returns the lines to print and, per target, how many
 * completed and in what wall time.
 */
async function concurrentStreams(n, upstream, floor, gw, auth) {
  const lines = [`streams: ${n} concurrent streaming requests, each ${CHUNKS} chunks × ${LONG_CHUNK_MS} ms (≈ ${((CHUNKS - 1) * LONG_CHUNK_MS) / 1000} s)`];
  const results = {};
  for (const [key, label, url, headers] of [
    ['direct', 'direct (upstream)', upstream.url + '/long/v1/chat/completions', {}],
    ['floor', 'floor proxy', floor.url + '/long/v1/chat/completions', {}],
    ['lean', 'gateway, lean /v1', gw.url + '/v1/chat/completions', auth],
  ]) {
    note(`streams: ${n} concurrent against ${label}`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const t0 = performance.now();
    const settled = await Promise.allSettled(Array.from({ length: n }, () => oneRequest(agent, url, headers, CHAT_STREAM_LONG)));
    const wall = (performance.now() - t0) / 1000;
    agent.destroy();
    const good = (s) => s.status === 'fulfilled' && s.value.status === 200 && isStream(s.value.body);
    const ok = settled.filter(good);
    const ttfbs = new Samples();
    const totals = new Samples();
    for (const s of ok) {
      ttfbs.push(s.value.ttfbMs);
      totals.push(s.value.totalMs);
    }
    const [t50, t99, tmax] = ttfbs.percentiles(50, 99, 100);
    const [d50, d99, dmax] = totals.percentiles(50, 99, 100);
    const bad = settled.find((s) => !good(s));
    const why = bad ? (bad.status === 'rejected' ? bad.reason.message : `HTTP ${bad.value.status}: ${bad.value.body.slice(0, 200)}`) : '';
    lines.push(
      `  ${label.padEnd(20)} ${ok.length}/${n} complete ${ok.length === n ? 'PASS' : 'FAIL'} in ${wall.toFixed(2)} s; TTFB p50 ${fmt.ms(t50)} p99 ${fmt.ms(t99)} max ${fmt.ms(tmax)} ms; duration p50 ${fmt.ms(d50)} p99 ${fmt.ms(d99)} max ${fmt.ms(dmax)} ms${why ? `; first failure: ${why}` : ''}`,
    );
    if (ok.length !== n) failures.push(`streams ${label}: ${n - ok.length} of ${n} did not complete (${why})`);
    results[key] = { n, ok: ok.length, wall };
  }
  return { lines, results };
}

/** --soak and --streams N: bounded extra checks on the lean path. */
async function runExtra({ upstream, gatewayEnv, auth, header }) {
  const out = ['', `Gateway benchmark (extra checks) — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`), ''];
  note('starting gateway, lean /v1 (npm start)');
  const gw = await startMeasuredGateway(gatewayEnv);
  try {
    const url = gw.url + '/v1/chat/completions';
    const problem = await probe(url, auth, CHAT, isChat);
    if (problem) throw new Error(`gateway probe failed: ${problem}`);
    if (opt.soak) {
      note(`soak: warm-up ${WARM_S} s, then ${Number(opt['soak-requests']).toLocaleString('en-US')} requests at c=50`);
      await load({ url, headers: auth, body: CHAT, connections: 50, seconds: WARM_S });
      const soak = await soakRun(gw, url, auth);
      out.push(...soakLines(soak), '');
      if (!soak.pass) targetsMissed++;
    }
    if (opt.streams)
      out.push(...(await concurrentStreams(Number(opt.streams), upstream, await startFloor(upstream.url, opt['floor-client']), gw, auth)).lines, '');
    if (opt['ttfb-breakdown']) out.push(...(await ttfbBreakdown({ upstream, gw, gatewayEnv, auth })), '');
    if (opt['idle-gaps']) out.push(...(await idleGaps({ upstream, gw, gatewayEnv, auth })), '');
  } finally {
    note('stopping gateway');
    await stopChild(gw);
  }
  out.push(...warningLines([['gateway, lean /v1', gw.warnings]]));
  process.stdout.write(`${out.join('\n')}\n`);
}

/**
 * The running lean gateway as a target and, when Redis is configured, a second one on the in-process
 * limiter (no Redis round trip), started here: the caller stops `local`.
 */
async function leanGateways(gw, gatewayEnv, auth) {
  const gateways = [
    { label: gatewayEnv.REDIS_URL ? 'gateway, lean, Redis limiter' : 'gateway, lean, in-process limiter', url: gw.url, headers: auth, gateway: true },
  ];
  let local = null;
  if (gatewayEnv.REDIS_URL) {
    note('starting a second lean gateway on the in-process limiter (no REDIS_URL)');
    const env = { ...gatewayEnv };
    delete env.REDIS_URL;
    local = await startMeasuredGateway(env);
    gateways.push({ label: 'gateway, lean, in-process limiter', url: local.url, headers: auth, gateway: true });
  }
  return { gateways, local };
}

/**
 * --ttfb-breakdown: where streaming TTFB goes. Sequential streams at c=1 against direct, the floor
 * (undici request behind, as in the table), the floor with node:http behind, the floor with undici's
 * dispatcher behind (the gateway's upstream client), the lean gateway, and a second
 * lean gateway on the in-process limiter (no Redis round trip): one stream per target per round, so
 * every target sees the same machine state.
 */
async function ttfbBreakdown({ upstream, gw, gatewayEnv, auth }) {
  const n = TTFB_N;
  const targets = [
    { label: 'direct (upstream)', url: upstream.url, headers: {} },
    ...(await Promise.all(
      [
        ['undici', 'undici'],
        ['http', 'node:http'],
        ['dispatch', 'undici dispatch'],
      ].map(async ([client, name]) => ({ label: `floor proxy (${name} behind)`, url: (await startFloor(upstream.url, client)).url, headers: {} })),
    )),
  ];
  const { gateways, local } = await leanGateways(gw, gatewayEnv, auth);
  targets.push(...gateways);
  let other = null;
  if (opt.compare) {
    note(`starting a lean gateway from ${opt.compare} (--compare)`);
    other = await startMeasuredGateway(gatewayEnv, opt.compare);
    targets.push({ label: `gateway, lean, ${path.basename(opt.compare)}`, url: other.url, headers: auth, gateway: true });
  }
  let otherEnv = null;
  if (opt['compare-env']) {
    const extra = Object.fromEntries(opt['compare-env'].split(',').map((kv) => kv.split('=')));
    note(`starting a lean gateway with ${opt['compare-env']} (--compare-env)`);
    otherEnv = await startMeasuredGateway({ ...gatewayEnv, ...extra });
    targets.push({ label: `gateway, lean, ${opt['compare-env']}`, url: otherEnv.url, headers: auth, gateway: true });
  }
  const run = Math.max(1, Number(opt['breakdown-run']));
  // Streams that went upstream without waiting for their admission (lib/gateway/admission/speculation.ts).
  const speculated = async () => Promise.all(targets.map(async (t) => (t.gateway ? (await gatewayGauges(t.url)).speculative || 0 : NaN)));
  try {
    const spec0 = await speculated();
    note(`TTFB breakdown: ${n} rounds of ${targets.length} sequential streams`);
    const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const samples = targets.map(() => new Samples());
    const fails = targets.map(() => 0);
    try {
      for (let round = -10; round < n; round++) {
        // Each round starts one target later, so that every target takes every place in the order
        // equally often. With a fixed order (and the extra gateways started without the first
        // one's --expose-gc), two gateways of the same build measured 0.14-0.17 ms apart.
        for (let o = 0; o < targets.length; o++) {
          const i = (o + round + 10) % targets.length;
          const t = targets[i];
          for (let j = 0; j < run; j++) {
            const r = await oneRequest(agents[i], t.url + '/v1/chat/completions', t.headers, CHAT_STREAM);
            if (r.status !== 200 || !r.body.includes('data: [DONE]')) {
              fails[i]++;
              if (fails[i] === 1) failures.push(`TTFB breakdown, ${t.label}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
            } else if (round >= 0 && (run === 1 || j > 0)) samples[i].push(r.ttfbMs);
          }
        }
      }
    } finally {
      for (const a of agents) a.destroy();
    }
    const [d50] = samples[0].percentiles(50);
    const [f50] = samples[1].percentiles(50);
    const out = [
      run === 1
        ? `streaming TTFB breakdown: ${n} rounds, one stream per target per round (c=1, ${CHUNKS} chunks × ${CHUNK_MS} ms), warm-up 10 rounds`
        : `streaming TTFB breakdown: ${n} rounds, ${run} streams back to back per target per round, all but the first counted (c=1, ${CHUNKS} chunks × ${CHUNK_MS} ms), warm-up 10 rounds`,
      `  ${'target'.padEnd(36)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'added p50'.padStart(9)} ${'vs floor'.padStart(9)}`,
    ];
    const signed = (v) => `${v >= 0 ? '+' : ''}${fmt.ms(v)}`;
    for (const [i, t] of targets.entries()) {
      const [p50, p99] = samples[i].percentiles(50, 99);
      out.push(
        `  ${t.label.padEnd(36)} ${fmt.ms(p50).padStart(7)} ${fmt.ms(p99).padStart(7)} ${(i ? signed(p50 - d50) : '').padStart(9)} ${(i > 1 ? signed(p50 - f50) : '').padStart(9)}`,
      );
    }
    const spec1 = await speculated();
    const specNote = targets.flatMap((t, i) => (t.gateway ? [`${t.label.replace('gateway, lean, ', '')} ${spec1[i] - spec0[i]}`] : []));
    out.push("  added = p50 − direct p50 (the target: < 1 ms); vs floor = p50 − the undici floor's p50");
    out.push(
      `  streams admitted speculatively (upstream called before the admission's reply), of ${(n + 10) * run} per gateway with the warm-up: ${specNote.join('; ')}`,
    );
    return out;
  } finally {
    if (local) await stopChild(local);
    if (other) await stopChild(other);
    if (otherEnv) await stopChild(otherEnv);
  }
}

/**
 * --idle-gaps 0,5,20: what idling costs the next request. Sequential non-stream requests at c=1
 * against direct, the floor and the lean gateway (and one on the in-process limiter when Redis is
 * configured): per target and round a first request, the pause with every process idle, then the
 * request measured; the order of the targets rotates from round to round. A node process that idled
 * ~20 ms answers slower than one kept busy, with no halt of its vCPU needed
 * (docs/decisions/014-benchmark-method.md): the streaming TTFB test (each stream starts after 5 ms chunk gaps and the previous stream's end) is
 * such a path, which is why the floor adds more there than to back-to-back requests.
 */
async function idleGaps({ upstream, gw, gatewayEnv, auth }) {
  const gaps = opt['idle-gaps'].split(',').map(Number);
  if (gaps.some((g) => !Number.isFinite(g) || g < 0)) throw new Error(`--idle-gaps takes milliseconds, e.g. 0,5,20 (got ${opt['idle-gaps']})`);
  const n = TTFB_N;
  const targets = [
    { label: 'direct (upstream)', url: upstream.url, headers: {} },
    { label: 'floor proxy', url: (await startFloor(upstream.url, opt['floor-client'])).url, headers: {} },
  ];
  const { gateways, local } = await leanGateways(gw, gatewayEnv, auth);
  targets.push(...gateways);
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const out = [
    `idle gaps: ${n} rounds per gap; per target and round, at c=1, a non-stream request, the pause, and the one measured (warm-up 10 rounds)`,
    `  ${'target'.padEnd(36)} ${gaps.map((g) => `${`${g} ms: p50`.padStart(11)} ${'added'.padStart(6)}`).join('  ')}`,
  ];
  try {
    const p50s = gaps.map(() => []);
    for (const [gi, gap] of gaps.entries()) {
      note(`idle gaps: ${gap} ms, ${n} rounds of ${targets.length} requests`);
      const samples = targets.map(() => new Samples());
      for (let round = -10; round < n; round++) {
        for (let o = 0; o < targets.length; o++) {
          const i = (o + round + 10) % targets.length;
          // A first request through the same target, then the pause, then the one measured: a 0 ms
          // pause measures a path just used, whatever ran before this target's turn.
          for (const counted of [false, true]) {
            if (counted && gap > 0) await sleep(gap);
            const r = await oneRequest(agents[i], targets[i].url + '/v1/chat/completions', targets[i].headers, CHAT);
            if (r.status !== 200) {
              failures.push(`idle gaps, ${targets[i].label}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
              return out;
            }
            if (counted && round >= 0) samples[i].push(r.totalMs);
          }
        }
      }
      p50s[gi] = samples.map((s) => s.percentiles(50)[0]);
    }
    for (const [i, t] of targets.entries()) {
      const cells = gaps.map((_, gi) => `${fmt.ms(p50s[gi][i]).padStart(11)} ${(i ? `+${fmt.ms(p50s[gi][i] - p50s[gi][0])}` : '').padStart(6)}`);
      out.push(`  ${t.label.padEnd(36)} ${cells.join('  ')}`);
    }
    out.push('  p50 = the whole request, client-side (ms); added = p50 − direct p50 after the same pause');
    return out;
  } finally {
    for (const a of agents) a.destroy();
    if (local) await stopChild(local);
  }
}

/** --profile lean|next: c=50 (--profile-connections) load under `node --cpu-prof`; top self time inside the load window. */
async function runProfile({ gatewayEnv, auth, header }) {
  const PC = Number(opt['profile-connections']);
  const dir = path.join(ROOT, 'bench/profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(dir, { recursive: true });
  const mode = opt.profile;
  note(`starting gateway (${mode}) under --cpu-prof`);
  const interval = opt['profile-interval'] ? ['--cpu-prof-interval', String(Number(opt['profile-interval']))] : [];
  const gw = await startGateway(mode, gatewayEnv, ['--cpu-prof', '--cpu-prof-dir', dir, ...interval]);
  let r;
  let from;
  let to;
  try {
    const url = gw.url + '/v1/chat/completions';
    const body = { chat: CHAT, chat64k: CHAT_64K, stream: CHAT_STREAM }[opt['profile-body']];
    const problem = await probe(url, auth, body, opt['profile-body'] === 'stream' ? (b) => b.includes('data: [DONE]') : isChat);
    if (problem) throw new Error(`gateway probe failed: ${problem}`);
    note(`warm-up ${WARM_S} s, then c=${PC} for ${C50_S} s`);
    await load({ url, headers: auth, body, connections: 50, seconds: WARM_S });
    from = Number(process.hrtime.bigint() / 1000n);
    r = recordRun(`profile c=${PC}`, await load({ url, headers: auth, body, connections: PC, seconds: C50_S, cpuPids: [gw.pid] }));
    to = Number(process.hrtime.bigint() / 1000n);
  } finally {
    note('stopping gateway (writes the profile)');
    await stopChild(gw);
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile written in ${dir} (did the gateway exit cleanly?)`);
  const { summarise, formatSummary } = await import('./profile-summary.mjs');
  const out = ['', `Gateway CPU profile (${mode}) — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`), ''];
  out.push(
    `c=${PC} for ${C50_S} s: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.p50)} ms, p99 ${fmt.ms(r.p99)} ms, CPU ${fmt.us(r.cpuPerReq[0])} µs/req (all processes of the tree)`,
  );
  for (const f of files) {
    const s = summarise(JSON.parse(readFileSync(path.join(dir, f), 'utf8')), { from, to, top: 40 });
    if (s.totalUs < 1000) continue;
    out.push(
      '',
      `${path.relative(ROOT, path.join(dir, f))} — samples inside the load window only (${(s.totalUs / r.requests).toFixed(0)} µs of busy main-thread samples per request)`,
      formatSummary(s),
    );
  }
  out.push(...warningLines([[`gateway (${mode})`, gw.warnings]]));
  process.stdout.write(`${out.join('\n')}\n`);
}

let targetsMissed = 0;
let exitCode = 0;
/** Where the gateways run from: a snapshot of the build (see snapshotBuild) or the repository. */
let buildDir = ROOT;
try {
  await main();
} catch (err) {
  if (!interrupted) {
    process.stderr.write(`\nbench: ${err instanceof Error ? err.message : String(err)}\n`);
    exitCode = 1;
  }
}
// After a signal the handler stops everything, removes the account and exits (130).
if (interrupted) await new Promise(() => {});
await stopAll();
if (failures.length) {
  process.stdout.write(`\nFAILED RUNS (errors or non-2xx responses):\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
  exitCode = 1;
}
if (opt.strict && targetsMissed) {
  process.stdout.write(`\n${targetsMissed} target(s) missed (--strict).\n`);
  exitCode ||= 3;
}
note(`done in ${((performance.now() - T0) / 1000).toFixed(0)} s`);
process.exit(exitCode);

// The command line of `npm run bench` (bench/README.md says what every option measures) and the
// figures derived from it, read once by every mode.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

const { values } = parseArgs({
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

/** Every option, defaults applied (a string option without a default may be undefined). */
export const opt = values as typeof values & {
  [
    K in
      | 'soak-requests'
      | 'stream-chunk-ms'
      | 'table-streams'
      | 'server'
      | 'targets'
      | 'profile-connections'
      | 'profile-body'
      | 'tracing-protocol'
      | 'breakdown-run'
      | 'floor-client'
      | 'footprint-setups'
      | 'footprint-soak'
      | 'footprint-rounds'
      | 'upstream-delay-ms'
  ]: string;
};

if (opt.help) {
  process.stdout.write(readFileSync(path.join(ROOT, 'bench/README.md'), 'utf8'));
  process.exit(0);
}

export const C1_S = Number(opt['c1-seconds']);
export const C50_S = Number(opt['c50-seconds']);
export const WARM_S = Number(opt['warmup-seconds']);
export const TTFB_N = Number(opt['ttfb-requests']);
export const CHUNKS = Number(opt.chunks);
export const CHUNK_MS = Number(opt['chunk-ms']);
export const LONG_CHUNK_MS = Number(opt['stream-chunk-ms']);

export type Mode = 'table' | 'footprint' | 'profile' | 'extra';
export const MODE: Mode = opt.footprint
  ? 'footprint'
  : opt.profile
    ? 'profile'
    : opt.soak || opt.streams || opt['ttfb-breakdown'] || opt['idle-gaps']
      ? 'extra'
      : 'table';

function refuse(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}
if (!['undici', 'http', 'dispatch'].includes(opt['floor-client'])) refuse('--floor-client takes undici, http or dispatch');
if (!['chat', 'chat64k', 'stream'].includes(opt['profile-body'])) refuse('--profile-body takes chat, chat64k or stream');
if (opt.profile && !['lean', 'next'].includes(opt.profile)) refuse('--profile takes lean or next');

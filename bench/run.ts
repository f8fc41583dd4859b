#!/usr/bin/env -S node --import tsx
// npm run bench — performance benchmark of the gateway against a local fake upstream.
// TypeScript, run by `node --import tsx` (the gateways it measures are the production build, not
// loaded through tsx). See bench/README.md for what every row means. One module per mode:
//
//   npm run bench                       the table (direct, floor, gateway lean, gateway next) + targets,
//                                       1000 concurrent streams on the lean path included    (modes/table.ts)
//   npm run bench -- --soak             100,000 requests on the lean path, RSS growth        (modes/extra.ts)
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
//                                                                                            (modes/footprint.ts)
//   npm run bench -- --profile lean     c=50 load on the lean gateway under `node --cpu-prof`, then the
//                                       top self-time functions of the load window (also: --profile next)
//                                                                                            (modes/profile.ts)
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { elapsedSeconds, isInterrupted, note, onCleanup, runNode, stopAll, tempDirs } from './lib/children';
import { CHUNKS, CHUNK_MS, LONG_CHUNK_MS, MODE, opt } from './lib/options';
import { failures, missed } from './lib/report';
import { BENCH_METRICS_TOKEN, benchConfig, preflight, resolveServices, snapshotBuild, startUpstream, type GatewayEnv } from './lib/services';
import type { RunContext } from './modes/context';
import { runExtra } from './modes/extra';
import { runFootprint } from './modes/footprint';
import { runProfile } from './modes/profile';
import { runTable } from './modes/table';

async function main(): Promise<void> {
  preflight();
  const { env: services, notes } = await resolveServices();
  const work = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  tempDirs.push(work);
  snapshotBuild(work);

  const upstream = await startUpstream(CHUNK_MS);
  const configFile = path.join(work, 'gateway.json');
  writeFileSync(configFile, JSON.stringify(benchConfig(upstream.url), null, 2));
  const inherited = { ...process.env };
  if (opt['no-redis']) delete inherited.REDIS_URL;
  const gatewayEnv: GatewayEnv = {
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
        return JSON.parse(l) as { apiKey?: string; userId?: string };
      } catch {
        return null;
      }
    })
    .find((j) => j?.apiKey);
  if (!account?.apiKey || !account.userId) throw new Error(`setup-account printed no key:\n${accountOut}`);
  const { apiKey, userId } = account;
  const ctx: RunContext = {
    upstream,
    gatewayEnv,
    work,
    auth: { authorization: `Bearer ${apiKey}` },
    anthropicAuth: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    header: [
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${os.platform()} ${os.release()}`,
      ...notes,
      `upstream: ${opt['upstream-delay-ms']} ms reply delay; streams of ${CHUNKS} chunks, ${CHUNK_MS} ms apart (${LONG_CHUNK_MS} ms in the concurrent-streams check)`,
      `load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}${os.loadavg()[0]! > os.cpus().length / 2 ? '  (busy machine: numbers are noisy)' : ''}`,
    ],
  };

  let cleaned = false;
  const cleanupAccount = async () => {
    if (cleaned || opt['keep-data']) return;
    cleaned = true;
    note('removing the benchmark account and its request logs');
    await runNode(['--import', 'tsx', 'bench/setup-account.ts', '--cleanup', userId], gatewayEnv, 60_000, true).catch((err: Error) =>
      note(`cleanup failed: ${err.message}`),
    );
  };
  onCleanup(cleanupAccount);
  try {
    if (MODE === 'table') await runTable(ctx);
    else if (MODE === 'footprint') await runFootprint(ctx);
    else if (MODE === 'profile') await runProfile(ctx);
    else await runExtra(ctx);
  } finally {
    if (!isInterrupted()) await cleanupAccount();
  }
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  if (!isInterrupted()) {
    process.stderr.write(`\nbench: ${err instanceof Error ? err.message : String(err)}\n`);
    exitCode = 1;
  }
}
// After a signal the handler stops everything, removes the account and exits (130).
if (isInterrupted()) await new Promise(() => {});
await stopAll();
if (failures.length) {
  process.stdout.write(`\nFAILED RUNS (errors or non-2xx responses):\n${failures.map((f) => `  - ${f}`).join('\n')}\n`);
  exitCode = 1;
}
if (opt.strict && missed.count) {
  process.stdout.write(`\n${missed.count} target(s) missed (--strict).\n`);
  exitCode ||= 3;
}
note(`done in ${elapsedSeconds().toFixed(0)} s`);
process.exit(exitCode);

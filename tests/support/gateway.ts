// Starts the production build as a child process against a generated operator config, the way
// an operator runs it: `node dist/server.mjs` (lean /v1 path) or `next start` (route-handler path).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GATEWAY_LOG_DIR } from './log-scan';
import { GEMINI_MODEL, fixtureChannel, fixtureConfig } from './operator-config.mjs';

export type GatewayMode = 'lean' | 'next';

export interface RunningGateway {
  url: string;
  port: number;
  process: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const ROOT = path.resolve(import.meta.dirname, '../..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export function writeConfig(config: unknown): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-config-'));
  const file = path.join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/**
 * A small operator config whose channels point at local fake upstreams (tests/support/operator-config.mjs,
 * shared with the benchmark). `channelPrefix` names the channels apart: runtime channel overrides (the
 * operator console) are shared by name through Redis and PostgreSQL, which every test file of a run shares.
 */
export function testConfig(opts: {
  openaiUrls: string[];
  anthropicUrls?: string[];
  /** Gemini channels, and the Gemini model in the catalogue. */
  geminiUrls?: string[];
  overrides?: Record<string, unknown>;
  channelPrefix?: string;
}): Record<string, unknown> {
  const timeouts = { connect_ms: 1000, first_byte_ms: 3000, idle_ms: 3000 };
  return fixtureConfig({
    channels: [
      ...opts.openaiUrls.map((url, i) => fixtureChannel({ protocol: 'openai', suffix: i + 1, url, priority: 10 - i, timeouts, prefix: opts.channelPrefix })),
      ...(opts.anthropicUrls ?? []).map((url, i) =>
        fixtureChannel({ protocol: 'anthropic', suffix: i + 1, url, priority: 10 - i, timeouts, prefix: opts.channelPrefix }),
      ),
      ...(opts.geminiUrls ?? []).map((url, i) =>
        fixtureChannel({ protocol: 'gemini', suffix: i + 1, url, priority: 10 - i, timeouts, prefix: opts.channelPrefix }),
      ),
    ],
    models: opts.geminiUrls?.length ? [GEMINI_MODEL] : [],
    extra: opts.overrides,
  });
}

/** One chat model per upstream protocol in testConfig (with `geminiUrls`). */
export const PROTOCOL_MODELS = { openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' } as const;
export type Protocol = keyof typeof PROTOCOL_MODELS;
/** The path each protocol's upstream call lands on (for PROTOCOL_MODELS' models). */
export const UPSTREAM_PATH: Record<Protocol, RegExp> = {
  openai: /^\/v1\/chat\/completions$/,
  anthropic: /^\/v1\/messages$/,
  gemini: /^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent\?alt=sse)$/,
};

/** The same config on both server paths (`npm start`'s lean path and `next start`). */
export async function startBothModes(config: unknown): Promise<Record<GatewayMode, RunningGateway>> {
  const [lean, next] = await Promise.all([startGateway({ config, mode: 'lean' }), startGateway({ config, mode: 'next' })]);
  return { lean, next };
}

export async function startGateway(opts: { config: unknown; mode?: GatewayMode; env?: Record<string, string>; nodeArgs?: string[] }): Promise<RunningGateway> {
  const port = await freePort();
  const configFile = writeConfig(opts.config);
  const mode = opts.mode ?? 'lean';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEWAY_CONFIG: configFile,
    NODE_ENV: 'production' as const,
    LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'info',
    LOG_FLUSH_MS: '50',
    NEXTAUTH_SECRET: 'test-secret-test-secret-test-secret',
    SECRETS_KEY: 'a'.repeat(64),
    // As `npm run start:next` runs it: the gateway drains and flushes on SIGTERM, not Next.
    NEXT_MANUAL_SIG_HANDLE: '1',
    ...opts.env,
  };
  const args = [
    ...(opts.nodeArgs ?? []),
    ...(mode === 'lean' ? ['dist/server.mjs'] : ['node_modules/next/dist/bin/next', 'start', '-p', String(port), '-H', '127.0.0.1']),
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Everything a gateway prints is also kept for the run-wide log-secret scan (global teardown).
  mkdirSync(GATEWAY_LOG_DIR, { recursive: true });
  // Written synchronously, so nothing is lost when a test worker ends right after its gateways.
  const logFd = openSync(path.join(GATEWAY_LOG_DIR, `${mode}-${port}-${Date.now()}.log`), 'a');
  const keep = (d: Buffer) => {
    output += d;
    writeSync(logFd, d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.once('close', () => {
    closeSync(logFd);
    rmSync(path.dirname(configFile), { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not start in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    process: child,
    output: () => output,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
        child.kill(signal);
      }),
  };
}

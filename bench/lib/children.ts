// Process bookkeeping: every child process and temporary folder this run starts is stopped and
// removed here, on a normal end, an error or SIGINT/SIGTERM.
import { spawn, type ChildProcessByStdio, type SpawnOptions } from 'node:child_process';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { ROOT } from './options';

const T0 = performance.now();

export function note(msg: string): void {
  const s = ((performance.now() - T0) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${s}s] ${msg}\n`);
}

export function elapsedSeconds(): number {
  return (performance.now() - T0) / 1000;
}

export interface Child {
  name: string;
  child: ChildProcessByStdio<null, Readable, Readable>;
  output: () => string;
  /** Warnings and errors the child logged (JSON log lines), counted by message. */
  warnings: Map<string, number>;
}

/** A started server: the child, the URL it listens on and the pid whose CPU and memory are read. */
export interface Server extends Child {
  url: string;
  pid: number;
}

const children = new Set<Child>();
export const tempDirs: string[] = [];
let interrupted = false;
export const isInterrupted = () => interrupted;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, extra: SpawnOptions = {}, { duringCleanup = false } = {}): Child {
  if (interrupted && !duringCleanup) throw new Error('interrupted');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, ...extra, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let partial = '';
  const warnings = new Map<string, number>();
  const keep = (d: Buffer | string) => {
    output += d;
    if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{') || !/"level":"(warn|error)"/.test(line)) continue;
      try {
        const j = JSON.parse(line) as { level: string; msg: string; error?: unknown };
        const key = `${j.level}: ${j.msg}${j.error ? ` (${String(j.error).slice(0, 160)})` : ''}`;
        warnings.set(key, (warnings.get(key) ?? 0) + 1);
      } catch {
        /* not a log line */
      }
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const entry: Child = { name, child, output: () => output, warnings };
  children.add(entry);
  child.once('exit', () => children.delete(entry));
  return entry;
}

export function stopChild(entry: Child, graceMs = 15_000): Promise<number | null> {
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

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((e) => stopChild(e, 5_000)));
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.length = 0;
}

/** Set once the benchmark account exists: removed again on every way out. */
let cleanupAccount: (() => Promise<void>) | undefined;
export function onCleanup(fn: () => Promise<void>): void {
  cleanupAccount = fn;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
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
export function readyLine(entry: Child, timeoutMs = 15_000): Promise<{ url: string; port?: number }> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${entry.name} did not start:\n${entry.output()}`)), timeoutMs);
    const onData = (d: Buffer) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      clearTimeout(timer);
      entry.child.stdout.off('data', onData);
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as { url: string; port?: number });
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

/** `node ARGS` to completion: its output, or an error with it. */
export function runNode(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000, duringCleanup = false): Promise<string> {
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

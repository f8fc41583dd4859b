import { describe, it, expect, vi, afterEach } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { logRedisErrors } from '@/lib/redis-client';

const run = promisify(execFile);
const adminCli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' },
  }).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );

describe('scripts/admin.ts command line', () => {
  // The database URL points nowhere: none of these may need it.
  it('--help prints the usage on stdout and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await adminCli(flag);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: npm run admin -- <command>/);
      expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
    }
  });

  it('an unknown command, an unknown option or no command prints the usage and exits 2', async () => {
    for (const [args, message] of [
      [['frobnicate'], /unknown command frobnicate/],
      [['create-key', '--frob'], /Unknown option '--frob'/],
      [[], /^Usage:/],
    ] as const) {
      const r = await adminCli(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/Usage: npm run admin -- <command>/);
      expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    }
  });
});

describe('scripts/admin.ts --help for every command', () => {
  // The commands as the script defines them: its COMMANDS list, the cases it runs and its usage.
  // They must agree, so a command added to one cannot miss the loop below.
  const source = readFileSync('scripts/admin.ts', 'utf8');
  // The list's names, however the formatter lays the array out (one line, or one name per line).
  const listed = [.../const COMMANDS = \[([^\]]*)\];/.exec(source)![1]!.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]!);
  const run = source.slice(source.indexOf('async function run('));
  const cases = [...run.matchAll(/^\s+case '([a-z-]+)':/gm)].map((m) => m[1]!);
  const usage = source.slice(source.indexOf('const usage = `'), source.indexOf('`;', source.indexOf('const usage = `')));
  const documented = [...usage.matchAll(/^ {2}([a-z][a-z-]+) {1,}--/gm)].map((m) => m[1]!);

  it('the script lists, runs and documents the same commands', () => {
    expect(listed.length).toBeGreaterThanOrEqual(10);
    expect([...cases].sort()).toEqual([...listed].sort());
    expect([...documented].sort()).toEqual([...listed].sort());
  });

  // The database URL points nowhere: help needs none. Three forms of asking, run side by side (tsx's
  // start-up is most of each); the last one with an unknown option and a flag missing its value,
  // which do not stop help.
  const forms = (command: string) => [
    [command, '--help'],
    ['help', command],
    [command, '--frob', '-h', '--usd'],
  ];
  it.each(listed)(
    '%s: its own usage lines on stdout, exit 0, nothing on stderr',
    async (command) => {
      for (const args of forms(command)) {
        const r = await adminCli(...args);
        expect(r.stderr, args.join(' ')).toBe('');
        expect(r.code, args.join(' ')).toBe(0);
        const lines = r.stdout.trimEnd().split('\n');
        expect(lines[0]).toBe('Usage: npm run admin -- <command> [options]');
        expect(lines[1], args.join(' ')).toMatch(new RegExp(`^  ${command} +--`));
        // Only that command's lines: no other command's.
        for (const other of listed.filter((c) => c !== command)) expect(r.stdout).not.toMatch(new RegExp(`^  ${other} `, 'm'));
      }
    },
    120_000,
  );
});

describe('Redis client errors', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are logged as rate-limited JSON lines, never as ioredis stack traces', async () => {
    // A port that refuses connections: every reconnect attempt is an error.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));

    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (stderr.push(String(chunk)), true));
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const client = new Redis(port, '127.0.0.1', { retryStrategy: () => 20, maxRetriesPerRequest: 0 });
    let errors = 0;
    logRedisErrors(client, 'test-role');
    client.on('error', () => errors++);
    try {
      await vi.waitFor(() => expect(errors).toBeGreaterThanOrEqual(5), { timeout: 10_000, interval: 20 });
    } finally {
      client.disconnect();
    }
    expect(consoleError).not.toHaveBeenCalled();
    const lines = stderr.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(1); // five errors or more, one line per interval
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', msg: 'redis client error', role: 'test-role' });
    expect(line.error).toMatch(/ECONNREFUSED/);
  });
});

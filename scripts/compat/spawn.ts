// Runs one client process for the compat runner: its output gathered, killed past the deadline.
import { spawn } from 'node:child_process';

export function runClient(
  bin: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
  timeoutMs = 200_000,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

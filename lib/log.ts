import { env } from '@/lib/env';

// Structured JSON logs on stdout/stderr. Secrets never reach here: callers pass ids, not keys,
// and `redact` masks anything that looks like a bearer token or one of our keys as a last guard.
type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

const secretPattern = /(sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,})/g;

export function redact(text: string): string {
  return text.replace(secretPattern, (m) => `${m.slice(0, 6)}…[redacted]`);
}

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (order[level] < order[env.LOG_LEVEL]) return;
  const line = redact(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack?.split('\n').slice(0, 6).join(' | ') };
  return { error: String(err) };
}

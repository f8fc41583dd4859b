import pino from 'pino';
import { env } from '@/lib/env';
import { singleton } from '@/lib/singleton';

// Structured JSON logs on stdout (debug, info) and stderr (warn, error), written by pino
// (docs/decisions/028-prom-client-and-pino.md). One JSON object a line: `time` (ISO 8601), `level`
// (its name), `msg`, then the caller's fields. Secrets never reach here: callers pass ids, not keys,
// and `redact` masks anything that looks like a bearer token or one of our keys in the whole line,
// as a last guard (pino's own `redact` option works by path and would miss a key inside a message).
type Level = 'debug' | 'info' | 'warn' | 'error';

const secretPattern = /(sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,})/g;

export function redact(text: string): string {
  return text.replace(secretPattern, (m) => `${m.slice(0, 6)}…[redacted]`);
}

const logger = singleton('logger', () =>
  pino(
    {
      level: env.LOG_LEVEL,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redact },
    },
    // dedupe: each line goes to the one stream of the highest level it reaches.
    pino.multistream(
      [
        { level: 'debug', stream: process.stdout },
        { level: 'warn', stream: process.stderr },
      ],
      { dedupe: true },
    ),
  ),
);

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  logger[level](fields, msg);
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, stack: err.stack?.split('\n').slice(0, 6).join(' | ') };
  return { error: String(err) };
}

// The log-secret scan over everything the test run's gateways printed: every gateway started
// through tests/support/gateway.ts writes its stdout and stderr under GATEWAY_LOG_DIR, and
// tests/zz-log-secret-scan.test.ts, which vitest.config.ts runs after every other file, fails
// if any of it holds a secret.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const GATEWAY_LOG_DIR = path.resolve(import.meta.dirname, '../../test-output/gateway-logs');

/** The test setup's own secrets (channel keys, SECRETS_KEY, NEXTAUTH_SECRET, test passwords). */
const LITERALS: [string, string][] = [
  ['upstream-secret-', 'an upstream channel key'],
  ['a'.repeat(64), 'SECRETS_KEY'],
  ['test-secret-test-secret', 'NEXTAUTH_SECRET'],
  ['correct-horse-9', 'a test password'],
  ['sturdy-pass-42', 'a test password'],
  ['csrf-pass-phrase-1', 'a test password'],
];
/** An issued API key: sk-gw- and 256 bits in base64url. */
const API_KEY = /sk-gw-[A-Za-z0-9_-]{43}/;

export interface Leak {
  file: string;
  line: number;
  what: string;
}

export function findSecrets(text: string, file = ''): Leak[] {
  const leaks: Leak[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [literal, what] of LITERALS) if (line.includes(literal)) leaks.push({ file, line: i + 1, what });
    if (API_KEY.test(line)) leaks.push({ file, line: i + 1, what: 'an API key' });
  });
  return leaks;
}

/** Scans every log file under dir. */
export function scanGatewayLogs(dir = GATEWAY_LOG_DIR): { files: number; bytes: number; leaks: Leak[] } {
  if (!existsSync(dir)) return { files: 0, bytes: 0, leaks: [] };
  const names = readdirSync(dir).filter((n) => n.endsWith('.log'));
  let bytes = 0;
  const leaks: Leak[] = [];
  for (const name of names) {
    const text = readFileSync(path.join(dir, name), 'utf8');
    bytes += text.length;
    leaks.push(...findSecrets(text, name));
  }
  return { files: names.length, bytes, leaks };
}

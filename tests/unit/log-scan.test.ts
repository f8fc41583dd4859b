import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSecrets, scanGatewayLogs } from '../support/log-scan';

describe('log-secret scan', () => {
  it('finds each kind of secret and names it, without flagging ordinary log lines', () => {
    const key = `sk-gw-${'A1b2_C3-'.repeat(5)}xyz`;
    const text = [
      '{"level":"info","msg":"listening","url":"http://127.0.0.1:3000"}',
      '{"level":"warn","msg":"api key lookup failed","error":"connect ECONNREFUSED"}',
      `{"level":"debug","msg":"auth","header":"Bearer ${key}"}`,
      '{"msg":"upstream","key":"upstream-secret-openai-1"}',
      `secrets ${'a'.repeat(64)}`,
      'password correct-horse-9',
    ].join('\n');
    const leaks = findSecrets(text, 'g.log');
    expect(leaks.map((l) => [l.line, l.what])).toEqual([
      [3, 'an API key'],
      [4, 'an upstream channel key'],
      [5, 'SECRETS_KEY'],
      [6, 'a test password'],
    ]);
    expect(findSecrets('{"msg":"Invalid or revoked API key.","key":"sk-gw-short"}')).toEqual([]);
  });

  it('reads every .log file of a folder', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'log-scan-'));
    try {
      writeFileSync(path.join(dir, 'clean.log'), 'nothing here\n');
      writeFileSync(path.join(dir, 'leaky.log'), 'ok\nupstream-secret-anthropic-1\n');
      const r = scanGatewayLogs(dir);
      expect(r.files).toBe(2);
      expect(r.leaks).toEqual([{ file: 'leaky.log', line: 2, what: 'an upstream channel key' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

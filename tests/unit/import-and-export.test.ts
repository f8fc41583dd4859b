// Issue 45 items 5 and 6, the parts without a server: the log_export and api_key_encrypted config
// fields, the quota conversion, imported key strings, and the batch id the receiver de-duplicates on.
import { describe, it, expect } from 'vitest';
import { buildConfig, ConfigError } from '@/lib/config';
import { encryptSecret } from '@/lib/crypto';
import { isWellFormedKey, generateApiKey } from '@/lib/keys/api-key';
import { quotaToPico, theirKeyString } from '@/lib/import/importer';
import { batchId, type ExportRow } from '@/lib/log-export/exporter';
import { testConfig } from '../support/gateway';

const withExport = (logExport: unknown) => testConfig({ openaiUrls: ['http://127.0.0.1:1'], overrides: { log_export: logExport } });

function errorOf(data: unknown): string {
  try {
    buildConfig(data, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('log_export config', () => {
  it('takes https, or http to a loopback host, with a secret; defaults for the batch', () => {
    const cfg = buildConfig(withExport({ url: 'https://logs.example.com/in', secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' }), 'test.yaml');
    expect(cfg.logExport).toMatchObject({ url: 'https://logs.example.com/in', maxRows: 500, maxSeconds: 10, settleSeconds: 15 });
    expect(buildConfig(withExport({ url: 'http://127.0.0.1:9/x', secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' }), 't').logExport?.url).toBe(
      'http://127.0.0.1:9/x',
    );
    expect(buildConfig(testConfig({ openaiUrls: ['http://127.0.0.1:1'] }), 't').logExport).toBeUndefined();
  });

  it('refuses plain http to another host, credentials in the URL, no secret, and a batch past 10,000 rows, naming the field', () => {
    const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=';
    expect(errorOf(withExport({ url: 'http://logs.example.com/in', secret }))).toMatch(/log_export\.url: must be https/);
    expect(errorOf(withExport({ url: 'https://u:p@logs.example.com/in', secret }))).toMatch(/log_export\.url/);
    expect(errorOf(withExport({ url: 'https://logs.example.com/in' }))).toMatch(/log_export\.secret: needs secret or secret_env/);
    expect(errorOf(withExport({ url: 'https://logs.example.com/in', secret, max_rows: 10_001 }))).toMatch(/log_export\.max_rows/);
    expect(errorOf(withExport({ url: 'https://logs.example.com/in', secret_env: 'NO_SUCH_VARIABLE_45' }))).toMatch(/log_export\.secret_env/);
  });
});

describe('imported channels', () => {
  it('decrypts api_key_encrypted at load; a key that does not decrypt names the field', () => {
    const cfg = testConfig({ openaiUrls: ['http://127.0.0.1:1'] }) as { channels: Record<string, unknown>[] };
    delete cfg.channels[0].api_key;
    cfg.channels[0].api_key_encrypted = encryptSecret('sk-imported-upstream');
    expect(buildConfig(cfg, 't').channels[0].apiKey).toBe('sk-imported-upstream');
    cfg.channels[0].api_key_encrypted = 'v1.AAAA.BBBB.CCCC';
    expect(errorOf(cfg)).toMatch(/channels\[0\]\.api_key_encrypted: does not decrypt/);
  });
});

describe('import conversions', () => {
  it('converts quota at the configured rate exactly', () => {
    expect(quotaToPico(500_000n, 500_000n)).toBe(1_000_000_000_000n);
    expect(quotaToPico(2_500_000n, 500_000n)).toBe(5_000_000_000_000n);
    expect(quotaToPico(1n, 500_000n)).toBe(2_000_000n); // $0.000002
    expect(quotaToPico(7n, 3n)).toBe(2_333_333_333_333n); // rounded down to the picodollar
  });

  it('accepts their sk- + 48 base62 keys besides ours, and nothing looser', () => {
    const theirs = theirKeyString('A'.repeat(24) + 'b'.repeat(24));
    expect(theirs).toBe(`sk-${'A'.repeat(24)}${'b'.repeat(24)}`);
    expect(theirKeyString(theirs)).toBe(theirs);
    expect(isWellFormedKey(theirs)).toBe(true);
    expect(isWellFormedKey(generateApiKey().key)).toBe(true);
    expect(isWellFormedKey(`sk-${'A'.repeat(47)}`)).toBe(false);
    expect(isWellFormedKey(`sk-${'A'.repeat(47)}-`)).toBe(false);
    expect(isWellFormedKey('sk-legacy_key')).toBe(false);
  });
});

describe('batch ids', () => {
  const row = (id: string, at: number) => ({ id, createdAt: new Date(at) }) as ExportRow;
  it('are the same for the same rows and differ for other rows or a replay', () => {
    const a = [row('r1', 1), row('r2', 2)];
    expect(batchId(a)).toBe(batchId([row('r1', 1), row('r2', 2)]));
    expect(batchId(a)).not.toBe(batchId([row('r1', 1)]));
    expect(batchId(a)).not.toBe(batchId(a, 'replay-1'));
    expect(batchId(a)).toMatch(/^lxb_[0-9a-f]{32}$/);
  });
});

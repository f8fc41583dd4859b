// The log-secret scan over everything this test run's gateways printed (tests/support/log-scan.ts).
// vitest.config.ts runs this file after all the others, so it reads the logs of every gateway the
// suite started; run on its own it finds none and says so.
import { expect, it } from 'vitest';
import { GATEWAY_LOG_DIR, scanGatewayLogs } from './support/log-scan';

it('no API key, upstream secret, SECRETS_KEY, session secret or password in any gateway log of the run', () => {
  const scan = scanGatewayLogs();
  expect(scan.files, `no gateway logs under ${GATEWAY_LOG_DIR}: this file scans what the rest of the suite logged`).toBeGreaterThan(0);
  const where = scan.leaks.slice(0, 20).map((l) => `${l.file}:${l.line}: ${l.what}`);
  expect(where, `${scan.leaks.length} secret(s) in ${scan.files} gateway logs (${scan.bytes} bytes)`).toEqual([]);
});

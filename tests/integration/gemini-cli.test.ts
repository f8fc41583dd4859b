// Gemini CLI, installed outside the project (scripts/compat: ~/.cache/model-gateway-compat), runs a
// task non-interactively through the gateway's Gemini surface on a model of each channel protocol.
// Skipped where the CLI is not installed (CI replays its recorded requests instead:
// tests/unit/gemini-fixtures.test.ts). With RECORD_CLIENT_FIXTURES=1 the requests it sent are
// written to tests/fixtures/clients/gemini-cli/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_MODELS, ROOT, startGateway, testConfig, type Protocol, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/gateway/runtime';

const CLIENTS_DIR = process.env.COMPAT_CLIENTS_DIR ?? path.join(homedir(), '.cache', 'model-gateway-compat');
const GEMINI_BIN = path.join(CLIENTS_DIR, 'node_modules', '.bin', 'gemini');
const FIXTURES = path.join(ROOT, 'tests', 'fixtures', 'clients', 'gemini-cli');
const installed = existsSync(GEMINI_BIN);
const TASK = 'Say hello.';

let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

beforeAll(async () => {
  if (!installed) return;
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url] }) });
  account = await createAccount({ tier: 'pro', balanceUsd: '50' });
});

afterAll(async () => {
  if (!installed) return;
  await gw?.stop();
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

/** Runs `gemini -p` in a scratch HOME (no telemetry, no update check) and answers its exit code and output. */
function runGemini(model: string, task: string): Promise<{ code: number | null; out: string }> {
  const home = mkdtempSync(path.join(tmpdir(), 'gemini-cli-'));
  mkdirSync(path.join(home, '.gemini'));
  writeFileSync(
    path.join(home, '.gemini', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
    }),
  );
  const work = mkdtempSync(path.join(tmpdir(), 'gemini-work-'));
  return new Promise((resolve) => {
    const child = spawn(GEMINI_BIN, ['-p', task, '--yolo', '-m', model], {
      cwd: work,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        GEMINI_API_KEY: account.apiKey,
        GOOGLE_GEMINI_BASE_URL: `${gw.url}/v1/gemini`,
        GEMINI_TELEMETRY_ENABLED: 'false',
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        NO_COLOR: '1',
        CI: '1',
      } as Record<string, string | undefined> as unknown as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe.skipIf(!installed)('Gemini CLI through the gateway', () => {
  it.each(Object.keys(PROTOCOL_MODELS) as Protocol[])(
    'finishes a task on a %s channel',
    async (protocol) => {
      const model = PROTOCOL_MODELS[protocol];
      const from = fake.requests.length;
      const { code, out } = await runGemini(model, TASK);
      if (code !== 0) console.log(out.slice(-3000));
      expect(out).not.toMatch(/API Error|\[API Error/);
      expect(code).toBe(0);
      const sent = fake.requests.slice(from);
      expect(sent.length).toBeGreaterThan(0);
      // On the Gemini channel the upstream got the CLI's own bytes (the identity): the fixture CI replays.
      if (protocol === 'gemini' && process.env.RECORD_CLIENT_FIXTURES === '1') {
        const version = JSON.parse(readFileSync(path.join(CLIENTS_DIR, 'node_modules', '@google', 'gemini-cli', 'package.json'), 'utf8')).version as string;
        const requests = sent.map((r) => ({ path: `/v1/gemini${r.path}`, body: JSON.parse(r.body) as unknown }));
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(path.join(FIXTURES, 'requests.json'), JSON.stringify({ client: '@google/gemini-cli', version, task: TASK, requests }, null, 2) + '\n');
      }
    },
    180_000,
  );
});

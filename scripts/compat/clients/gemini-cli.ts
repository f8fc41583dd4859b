// Gemini CLI, non-interactive (`gemini -p … --yolo`), against the gateway's Gemini surface
// (GOOGLE_GEMINI_BASE_URL): the model is whatever the matrix asks. A scratch HOME holds only the
// settings that pick API-key auth and turn off telemetry and update checks.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileTaskPrompt } from '../../../tests/support/file-task';
import { runClient } from '../spawn';
import type { CompatClient, CompatContext } from '../types';

const VERSION = '0.61.0';

const geminiCli: CompatClient = {
  name: 'gemini-cli',
  version: VERSION,
  packages: [`@google/gemini-cli@${VERSION}`],
  async run(ctx: CompatContext) {
    const bin = path.join(ctx.clientsDir, 'node_modules', '.bin', 'gemini');
    const home = mkdtempSync(path.join(os.tmpdir(), 'compat-gemini-home-'));
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
    const file = path.join(ctx.workdir, 'hello.txt');
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: home,
      TERM: 'dumb',
      NO_COLOR: '1',
      GEMINI_API_KEY: ctx.apiKey,
      GOOGLE_GEMINI_BASE_URL: `${ctx.baseUrl}/v1/gemini`,
      GEMINI_TELEMETRY_ENABLED: 'false',
      // Headless runs refuse an untrusted folder; the workdir is the run's own scratch folder.
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    };
    try {
      const { code, out } = await runClient(bin, ['-p', fileTaskPrompt(file), '--yolo', '-m', ctx.model, '--output-format', 'json'], ctx.workdir, env);
      if (existsSync(file) && readFileSync(file, 'utf8').trim() === 'hello') return { ok: true, detail: 'file written' };
      return { ok: false, detail: `exit ${code}, no file: ${out.trim().slice(-200)}` };
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
};

export default geminiCli;

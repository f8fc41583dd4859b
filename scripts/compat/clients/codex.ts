// Codex CLI, non-interactive (`codex exec`), against the gateway's Responses API: a model provider
// (`wire_api = "responses"`, the only one Codex still accepts) in a CODEX_HOME of its own, so no
// login, config or history of the machine's user is read or written.
import { runClient } from '../spawn';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileTaskPrompt } from '../../../tests/support/file-task';
import type { CompatClient, CompatContext } from '../types';

const VERSION = '0.169.0';

function configToml(ctx: CompatContext): string {
  return [
    `model = ${JSON.stringify(ctx.model)}`,
    'model_provider = "gw"',
    '',
    '[model_providers.gw]',
    'name = "gw"',
    `base_url = ${JSON.stringify(`${ctx.baseUrl}/v1`)}`,
    'env_key = "GW_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n');
}

const codex: CompatClient = {
  name: 'codex',
  version: VERSION,
  packages: [`@openai/codex@${VERSION}`],
  async run(ctx: CompatContext) {
    const bin = path.join(ctx.clientsDir, 'node_modules', '.bin', 'codex');
    const home = mkdtempSync(path.join(os.tmpdir(), 'compat-codex-home-'));
    writeFileSync(path.join(home, 'config.toml'), configToml(ctx));
    const file = path.join(ctx.workdir, 'hello.txt');
    const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, TERM: 'dumb', GW_KEY: ctx.apiKey };
    try {
      // Root in a throwaway folder: no sandbox to ask approvals of.
      const { code, out } = await runClient(
        bin,
        ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--color', 'never', fileTaskPrompt(file)],
        ctx.workdir,
        env,
      );
      if (existsSync(file) && readFileSync(file, 'utf8').trim() === 'hello') return { ok: true, detail: 'file written' };
      const last = out
        .trim()
        .split('\n')
        .filter((l) => /error|status|unexpected/i.test(l))
        .slice(-2)
        .join(' | ');
      return { ok: false, detail: `exit ${code}, no file: ${(last || out.trim().split('\n').at(-1) || '').slice(0, 200)}` };
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
};

export default codex;

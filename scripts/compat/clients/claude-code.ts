// Claude Code, non-interactive (`claude -p`), against the gateway's Anthropic mirror: the model is
// whatever the matrix asks, its side tasks (titles, summaries) on the same model.
import { execFileSync } from 'node:child_process';
import { runClient } from '../spawn';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileTaskPrompt } from '../../../tests/support/file-task';
import type { CompatClient, CompatContext } from '../types';

const VERSION = '2.1.328';

/** npm skips the postinstall that puts the native binary in place (install.cjs): run it once. */
function binary(clientsDir: string): string {
  const dir = path.join(clientsDir, 'node_modules', '@anthropic-ai', 'claude-code');
  const bin = path.join(dir, 'bin', 'claude.exe');
  if (!existsSync(bin) || statSync(bin).size < 1_000_000) execFileSync(process.execPath, ['install.cjs'], { cwd: dir, stdio: 'inherit' });
  return bin;
}

const claudeCode: CompatClient = {
  name: 'claude-code',
  version: VERSION,
  packages: [`@anthropic-ai/claude-code@${VERSION}`],
  async run(ctx: CompatContext) {
    const bin = binary(ctx.clientsDir);
    const home = mkdtempSync(path.join(os.tmpdir(), 'compat-claude-home-'));
    const file = path.join(ctx.workdir, 'hello.txt');
    // Only what Claude Code needs: no credentials or settings of the machine's own user.
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      HOME: home,
      TERM: 'dumb',
      ANTHROPIC_BASE_URL: `${ctx.baseUrl}/v1/anthropic`,
      ANTHROPIC_API_KEY: ctx.apiKey,
      ANTHROPIC_MODEL: ctx.model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: ctx.model,
      ANTHROPIC_SMALL_FAST_MODEL: ctx.model,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      // --dangerously-skip-permissions is refused to root outside a sandbox; this run is one.
      IS_SANDBOX: '1',
    };
    try {
      const { code, out } = await runClient(
        bin,
        ['-p', fileTaskPrompt(file), '--dangerously-skip-permissions', '--output-format', 'json', '--max-turns', '4'],
        ctx.workdir,
        env,
      );
      if (existsSync(file) && readFileSync(file, 'utf8').trim() === 'hello') return { ok: true, detail: 'file written' };
      let detail = out.trim().split('\n').at(-1) ?? '';
      try {
        const result = JSON.parse(detail) as { result?: string; subtype?: string };
        detail = `${result.subtype ?? ''} ${result.result ?? ''}`;
      } catch {
        /* not the JSON result: the last line as it is */
      }
      return { ok: false, detail: `exit ${code}, no file: ${detail.slice(0, 200)}` };
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
};

export default claudeCode;

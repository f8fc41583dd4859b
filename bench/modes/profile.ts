// --profile lean|next: c=50 (--profile-connections) load under `node --cpu-prof`; top self time inside the load window.
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { note, stopChild } from '../lib/children';
import { load, probe, type LoadResult } from '../lib/measure';
import { C50_S, ROOT, WARM_S, opt } from '../lib/options';
import { fmt, recordRun, warningLines } from '../lib/report';
import { startGateway } from '../lib/services';
import { CHAT, CHAT_64K, CHAT_STREAM, isChat } from '../lib/workloads';
import type { RunContext } from './context';

export async function runProfile({ gatewayEnv, auth, header }: RunContext): Promise<void> {
  const PC = Number(opt['profile-connections']);
  const dir = path.join(ROOT, 'bench/profiles', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(dir, { recursive: true });
  const mode = opt.profile as 'lean' | 'next';
  note(`starting gateway (${mode}) under --cpu-prof`);
  const interval = opt['profile-interval'] ? ['--cpu-prof-interval', String(Number(opt['profile-interval']))] : [];
  const gw = await startGateway(mode, gatewayEnv, ['--cpu-prof', '--cpu-prof-dir', dir, ...interval]);
  let r: LoadResult;
  let from: number;
  let to: number;
  try {
    const url = gw.url + '/v1/chat/completions';
    const body = { chat: CHAT, chat64k: CHAT_64K, stream: CHAT_STREAM }[opt['profile-body'] as 'chat' | 'chat64k' | 'stream'];
    const problem = await probe(url, auth, body, opt['profile-body'] === 'stream' ? (b) => b.includes('data: [DONE]') : isChat);
    if (problem) throw new Error(`gateway probe failed: ${problem}`);
    note(`warm-up ${WARM_S} s, then c=${PC} for ${C50_S} s`);
    await load({ url, headers: auth, body, connections: 50, seconds: WARM_S });
    from = Number(process.hrtime.bigint() / 1000n);
    r = recordRun(`profile c=${PC}`, await load({ url, headers: auth, body, connections: PC, seconds: C50_S, cpuPids: [gw.pid] }));
    to = Number(process.hrtime.bigint() / 1000n);
  } finally {
    note('stopping gateway (writes the profile)');
    await stopChild(gw);
  }
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile written in ${dir} (did the gateway exit cleanly?)`);
  const { summarise, formatSummary } = await import('../profile-summary.mjs');
  const out = ['', `Gateway CPU profile (${mode}) — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`), ''];
  out.push(
    `c=${PC} for ${C50_S} s: ${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.p50)} ms, p99 ${fmt.ms(r.p99)} ms, CPU ${fmt.us(r.cpuPerReq[0])} µs/req (all processes of the tree)`,
  );
  for (const f of files) {
    const s = summarise(JSON.parse(readFileSync(path.join(dir, f), 'utf8')), { from, to, top: 40 });
    if (s.totalUs < 1000) continue;
    out.push(
      '',
      `${path.relative(ROOT, path.join(dir, f))} — samples inside the load window only (${(s.totalUs / r.requests).toFixed(0)} µs of busy main-thread samples per request)`,
      formatSummary(s),
    );
  }
  out.push(...warningLines([[`gateway (${mode})`, gw.warnings]]));
  process.stdout.write(`${out.join('\n')}\n`);
}

// --soak, --streams N, --ttfb-breakdown and --idle-gaps: bounded extra checks on the lean path.
import http from 'node:http';
import path from 'node:path';
import { note, sleep, stopChild, type Server } from '../lib/children';
import { concurrentStreams, soakLines, soakRun } from '../lib/long-runs';
import { Samples, load, oneRequest, probe, type Headers } from '../lib/measure';
import { CHUNKS, CHUNK_MS, TTFB_N, WARM_S, opt } from '../lib/options';
import { failures, fmt, missed, warningLines } from '../lib/report';
import { gatewayGauges, startFloor, startMeasuredGateway, type GatewayEnv } from '../lib/services';
import { CHAT, CHAT_STREAM, isChat } from '../lib/workloads';
import type { RunContext } from './context';

export async function runExtra({ upstream, gatewayEnv, auth, header }: RunContext): Promise<void> {
  const out = ['', `Gateway benchmark (extra checks) — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`), ''];
  note('starting gateway, lean /v1 (npm start)');
  const gw = await startMeasuredGateway(gatewayEnv);
  try {
    const url = gw.url + '/v1/chat/completions';
    const problem = await probe(url, auth, CHAT, isChat);
    if (problem) throw new Error(`gateway probe failed: ${problem}`);
    if (opt.soak) {
      note(`soak: warm-up ${WARM_S} s, then ${Number(opt['soak-requests']).toLocaleString('en-US')} requests at c=50`);
      await load({ url, headers: auth, body: CHAT, connections: 50, seconds: WARM_S });
      const soak = await soakRun(gw, url, auth);
      out.push(...soakLines(soak), '');
      if (!soak.pass) missed.count++;
    }
    if (opt.streams)
      out.push(...(await concurrentStreams(Number(opt.streams), upstream, await startFloor(upstream.url, opt['floor-client']), gw, auth)).lines, '');
    if (opt['ttfb-breakdown']) out.push(...(await ttfbBreakdown(upstream, gw, gatewayEnv, auth)), '');
    if (opt['idle-gaps']) out.push(...(await idleGaps(opt['idle-gaps'], upstream, gw, gatewayEnv, auth)), '');
  } finally {
    note('stopping gateway');
    await stopChild(gw);
  }
  out.push(...warningLines([['gateway, lean /v1', gw.warnings]]));
  process.stdout.write(`${out.join('\n')}\n`);
}

interface Target {
  label: string;
  url: string;
  headers: Headers;
  /** A gateway: its /metrics are read. */
  gateway?: boolean;
}

/**
 * The running lean gateway as a target and, when Redis is configured, a second one on the in-process
 * limiter (no Redis round trip), started here: the caller stops `local`.
 */
async function leanGateways(gw: Server, gatewayEnv: GatewayEnv, auth: Headers): Promise<{ gateways: Target[]; local: Server | null }> {
  const gateways: Target[] = [
    { label: gatewayEnv.REDIS_URL ? 'gateway, lean, Redis limiter' : 'gateway, lean, in-process limiter', url: gw.url, headers: auth, gateway: true },
  ];
  let local: Server | null = null;
  if (gatewayEnv.REDIS_URL) {
    note('starting a second lean gateway on the in-process limiter (no REDIS_URL)');
    const env = { ...gatewayEnv };
    delete env.REDIS_URL;
    local = await startMeasuredGateway(env);
    gateways.push({ label: 'gateway, lean, in-process limiter', url: local.url, headers: auth, gateway: true });
  }
  return { gateways, local };
}

/**
 * --ttfb-breakdown: where streaming TTFB goes. Sequential streams at c=1 against direct, the floor
 * (undici request behind, as in the table), the floor with node:http behind, the floor with undici's
 * dispatcher behind (the gateway's upstream client), the lean gateway, and a second
 * lean gateway on the in-process limiter (no Redis round trip): one stream per target per round, so
 * every target sees the same machine state.
 */
async function ttfbBreakdown(upstream: Server, gw: Server, gatewayEnv: GatewayEnv, auth: Headers): Promise<string[]> {
  const n = TTFB_N;
  const floors: [string, string][] = [
    ['undici', 'undici'],
    ['http', 'node:http'],
    ['dispatch', 'undici dispatch'],
  ];
  const targets: Target[] = [
    { label: 'direct (upstream)', url: upstream.url, headers: {} },
    ...(await Promise.all(
      floors.map(async ([client, name]) => ({ label: `floor proxy (${name} behind)`, url: (await startFloor(upstream.url, client)).url, headers: {} })),
    )),
  ];
  const { gateways, local } = await leanGateways(gw, gatewayEnv, auth);
  targets.push(...gateways);
  let other: Server | null = null;
  if (opt.compare) {
    note(`starting a lean gateway from ${opt.compare} (--compare)`);
    other = await startMeasuredGateway(gatewayEnv, opt.compare);
    targets.push({ label: `gateway, lean, ${path.basename(opt.compare)}`, url: other.url, headers: auth, gateway: true });
  }
  let otherEnv: Server | null = null;
  if (opt['compare-env']) {
    const extra = Object.fromEntries(opt['compare-env'].split(',').map((kv) => kv.split('=') as [string, string]));
    note(`starting a lean gateway with ${opt['compare-env']} (--compare-env)`);
    otherEnv = await startMeasuredGateway({ ...gatewayEnv, ...extra });
    targets.push({ label: `gateway, lean, ${opt['compare-env']}`, url: otherEnv.url, headers: auth, gateway: true });
  }
  const run = Math.max(1, Number(opt['breakdown-run']));
  // Streams that went upstream without waiting for their admission (lib/gateway/admission/speculation.ts).
  const speculated = async () => Promise.all(targets.map(async (t) => (t.gateway ? (await gatewayGauges(t.url)).speculative || 0 : NaN)));
  try {
    const spec0 = await speculated();
    note(`TTFB breakdown: ${n} rounds of ${targets.length} sequential streams`);
    const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const samples = targets.map(() => new Samples());
    const fails = targets.map(() => 0);
    try {
      for (let round = -10; round < n; round++) {
        // Each round starts one target later, so that every target takes every place in the order
        // equally often. With a fixed order (and the extra gateways started without the first
        // one's --expose-gc), two gateways of the same build measured 0.14-0.17 ms apart.
        for (let o = 0; o < targets.length; o++) {
          const i = (o + round + 10) % targets.length;
          const t = targets[i]!;
          for (let j = 0; j < run; j++) {
            const r = await oneRequest(agents[i]!, t.url + '/v1/chat/completions', t.headers, CHAT_STREAM);
            if (r.status !== 200 || !r.body.includes('data: [DONE]')) {
              fails[i]!++;
              if (fails[i] === 1) failures.push(`TTFB breakdown, ${t.label}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
            } else if (round >= 0 && (run === 1 || j > 0)) samples[i]!.push(r.ttfbMs);
          }
        }
      }
    } finally {
      for (const a of agents) a.destroy();
    }
    const [d50] = samples[0]!.percentiles(50) as [number];
    const [f50] = samples[1]!.percentiles(50) as [number];
    const out = [
      run === 1
        ? `streaming TTFB breakdown: ${n} rounds, one stream per target per round (c=1, ${CHUNKS} chunks × ${CHUNK_MS} ms), warm-up 10 rounds`
        : `streaming TTFB breakdown: ${n} rounds, ${run} streams back to back per target per round, all but the first counted (c=1, ${CHUNKS} chunks × ${CHUNK_MS} ms), warm-up 10 rounds`,
      `  ${'target'.padEnd(36)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'added p50'.padStart(9)} ${'vs floor'.padStart(9)}`,
    ];
    const signed = (v: number) => `${v >= 0 ? '+' : ''}${fmt.ms(v)}`;
    for (const [i, t] of targets.entries()) {
      const [p50, p99] = samples[i]!.percentiles(50, 99) as [number, number];
      out.push(
        `  ${t.label.padEnd(36)} ${fmt.ms(p50).padStart(7)} ${fmt.ms(p99).padStart(7)} ${(i ? signed(p50 - d50) : '').padStart(9)} ${(i > 1 ? signed(p50 - f50) : '').padStart(9)}`,
      );
    }
    const spec1 = await speculated();
    const specNote = targets.flatMap((t, i) => (t.gateway ? [`${t.label.replace('gateway, lean, ', '')} ${spec1[i]! - spec0[i]!}`] : []));
    out.push("  added = p50 − direct p50 (the target: < 1 ms); vs floor = p50 − the undici floor's p50");
    out.push(
      `  streams admitted speculatively (upstream called before the admission's reply), of ${(n + 10) * run} per gateway with the warm-up: ${specNote.join('; ')}`,
    );
    return out;
  } finally {
    if (local) await stopChild(local);
    if (other) await stopChild(other);
    if (otherEnv) await stopChild(otherEnv);
  }
}

/**
 * --idle-gaps 0,5,20: what idling costs the next request. Sequential non-stream requests at c=1
 * against direct, the floor and the lean gateway (and one on the in-process limiter when Redis is
 * configured): per target and round a first request, the pause with every process idle, then the
 * request measured; the order of the targets rotates from round to round. A node process that idled
 * ~20 ms answers slower than one kept busy, with no halt of its vCPU needed
 * (docs/decisions/014-benchmark-method.md): the streaming TTFB test (each stream starts after 5 ms chunk gaps and the previous stream's end) is
 * such a path, which is why the floor adds more there than to back-to-back requests.
 */
async function idleGaps(spec: string, upstream: Server, gw: Server, gatewayEnv: GatewayEnv, auth: Headers): Promise<string[]> {
  const gaps = spec.split(',').map(Number);
  if (gaps.some((g) => !Number.isFinite(g) || g < 0)) throw new Error(`--idle-gaps takes milliseconds, e.g. 0,5,20 (got ${spec})`);
  const n = TTFB_N;
  const targets: Target[] = [
    { label: 'direct (upstream)', url: upstream.url, headers: {} },
    { label: 'floor proxy', url: (await startFloor(upstream.url, opt['floor-client'])).url, headers: {} },
  ];
  const { gateways, local } = await leanGateways(gw, gatewayEnv, auth);
  targets.push(...gateways);
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const out = [
    `idle gaps: ${n} rounds per gap; per target and round, at c=1, a non-stream request, the pause, and the one measured (warm-up 10 rounds)`,
    `  ${'target'.padEnd(36)} ${gaps.map((g) => `${`${g} ms: p50`.padStart(11)} ${'added'.padStart(6)}`).join('  ')}`,
  ];
  try {
    const p50s: number[][] = gaps.map(() => []);
    for (const [gi, gap] of gaps.entries()) {
      note(`idle gaps: ${gap} ms, ${n} rounds of ${targets.length} requests`);
      const samples = targets.map(() => new Samples());
      for (let round = -10; round < n; round++) {
        for (let o = 0; o < targets.length; o++) {
          const i = (o + round + 10) % targets.length;
          const t = targets[i]!;
          // A first request through the same target, then the pause, then the one measured: a 0 ms
          // pause measures a path just used, whatever ran before this target's turn.
          for (const counted of [false, true]) {
            if (counted && gap > 0) await sleep(gap);
            const r = await oneRequest(agents[i]!, t.url + '/v1/chat/completions', t.headers, CHAT);
            if (r.status !== 200) {
              failures.push(`idle gaps, ${t.label}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
              return out;
            }
            if (counted && round >= 0) samples[i]!.push(r.totalMs);
          }
        }
      }
      p50s[gi] = samples.map((s) => s.percentiles(50)[0]!);
    }
    for (const [i, t] of targets.entries()) {
      const cells = gaps.map((_, gi) => `${fmt.ms(p50s[gi]![i]).padStart(11)} ${(i ? `+${fmt.ms(p50s[gi]![i]! - p50s[gi]![0]!)}` : '').padStart(6)}`);
      out.push(`  ${t.label.padEnd(36)} ${cells.join('  ')}`);
    }
    out.push('  p50 = the whole request, client-side (ms); added = p50 − direct p50 after the same pause');
    return out;
  } finally {
    for (const a of agents) a.destroy();
    if (local) await stopChild(local);
  }
}

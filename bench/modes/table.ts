// The default mode: the table (direct, floor, gateway lean, gateway next, and the A/B rows asked
// for), the lean path's other endpoints, and the targets checked against the floor and direct.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isInterrupted, note, sleep, stopChild, type Server } from '../lib/children';
import { concurrentStreams, soakLines, soakRun, type Soak, type Streams } from '../lib/long-runs';
import { SERVICE_PIDS, load, probe, rssMb, ttfbRun, type Headers, type LoadResult, type LoadSpec, type TtfbResult } from '../lib/measure';
import { C1_S, C50_S, CHUNKS, CHUNK_MS, TTFB_N, WARM_S, opt } from '../lib/options';
import { failures, fmt, missed, recordRun, table, warningLines } from '../lib/report';
import { gatewayGauges, startFloor, startGateway, startMeasuredGateway, type Gauges } from '../lib/services';
import {
  CHAT,
  CHAT_64K,
  CHAT_ON_CLAUDE,
  CHAT_STREAM,
  CHAT_STREAM_ON_CLAUDE,
  EMBED,
  MESSAGES,
  MESSAGES_ON_GPT,
  MESSAGES_STREAM,
  MESSAGES_STREAM_ON_GPT,
  isChat,
  isEmbedding,
  isMessage,
} from '../lib/workloads';
import type { RunContext } from './context';

async function loadTarget(target: { label: string }, spec: LoadSpec): Promise<LoadResult> {
  const label = `${target.label}, c=${spec.connections}`;
  note(`${label}: ${spec.seconds ? `${spec.seconds} s` : `${spec.amount} requests`}`);
  return recordRun(label, await load(spec));
}

interface OtlpSink {
  url: string;
  exports: number;
  bytes: number;
  close: () => Promise<void>;
}

/** An OTLP/HTTP receiver that accepts and drops every export (--tracing): its own CPU is the bench's, not the gateway's. */
async function startOtlpSink(): Promise<OtlpSink> {
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (sink.bytes += c.length));
    req.on('end', () => {
      sink.exports++;
      const json = String(req.headers['content-type']).includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
    });
  });
  const sink: OtlpSink = { url: '', exports: 0, bytes: 0, close: () => new Promise((r) => server.close(() => r())) };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

interface Target {
  key: string;
  label: string;
  auth: Headers;
  start: () => Promise<Server>;
  /** Started (and stopped) here, and a gateway: its /metrics are read. */
  own: boolean;
}

interface Row {
  label: string;
  error?: string;
  rssBefore?: number;
  rssAfter?: number;
  c1?: LoadResult;
  c50?: LoadResult;
  gauges?: Gauges;
}

type Extra = Partial<LoadResult> & { error?: string; ttfb?: TtfbResult };

export async function runTable({ upstream, gatewayEnv, auth, anthropicAuth, header }: RunContext): Promise<void> {
  const floor = await startFloor(upstream.url, opt['floor-client']);
  const chatPath = '/v1/chat/completions';
  const wantedExtra = new Set<string>();
  const targets: Target[] = [
    { key: 'direct', label: 'direct (upstream)', auth: {}, start: async () => upstream, own: false },
    {
      key: 'floor',
      label: opt['floor-client'] === 'undici' ? 'floor proxy' : `floor proxy (${opt['floor-client']})`,
      auth: {},
      start: async () => floor,
      own: false,
    },
    {
      key: 'lean',
      label: opt.server === 'dist/server.mjs' ? 'gateway, lean /v1 (npm start)' : `gateway, lean /v1 (${path.basename(opt.server)})`,
      auth,
      start: () => startMeasuredGateway(gatewayEnv),
      own: true,
    },
    {
      key: 'next',
      label: 'gateway, route handlers (next start)',
      auth,
      start: () => startGateway('next', { ...gatewayEnv, NEXT_MANUAL_SIG_HANDLE: '1' }),
      own: true,
    },
  ];
  const afterLean = (t: Target) => {
    const at = targets.findIndex((x) => x.key === 'lean') + 1 || targets.length;
    targets.splice(at, 0, t);
    wantedExtra.add(t.key);
  };
  // A/B in one run: --compare FILE measures another bundle of server.ts (e.g. the previous build) right after the lean row.
  const compare = opt.compare;
  if (compare) {
    afterLean({
      key: 'compare',
      label: `gateway, lean /v1 (${path.basename(compare)})`,
      auth,
      // Without the config keys an older build would refuse as unknown (channel_health came in with
      // channel health; the fixture sets it only to keep health from judging, which an older build never does).
      start: () => {
        const older = path.join(path.dirname(gatewayEnv.GATEWAY_CONFIG), 'gateway-compare.json');
        const { channel_health: _unknownToOlderBuilds, ...rest } = JSON.parse(readFileSync(gatewayEnv.GATEWAY_CONFIG, 'utf8')) as Record<string, unknown>;
        writeFileSync(older, JSON.stringify(rest, null, 2));
        return startMeasuredGateway({ ...gatewayEnv, GATEWAY_CONFIG: older }, compare);
      },
      own: true,
    });
  }
  // A/B in one run: --response-cache measures the same build answering every request from the
  // response cache (x-service-cache; the benchmark's body never changes, so all but the first are
  // hits), right after the lean row: CPU per request of a hit against a proxied request.
  if (opt['response-cache']) {
    afterLean({
      key: 'cached',
      label: 'gateway, lean /v1, response cache hits',
      auth: { ...auth, 'x-service-cache': 'ttl=3600' },
      start: () => startMeasuredGateway(gatewayEnv),
      own: true,
    });
  }
  // A/B in one run: --tracing measures the same build with OpenTelemetry tracing on, right after the lean row.
  const sink = opt.tracing ? await startOtlpSink() : null;
  if (sink) {
    afterLean({
      key: 'traced',
      label: `gateway, lean /v1, tracing on (OTLP ${opt['tracing-protocol']})`,
      auth,
      start: () =>
        startMeasuredGateway({
          ...gatewayEnv,
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: opt['tracing-protocol'],
          OTEL_TRACES_SAMPLER: 'always_on',
        }),
      own: true,
    });
  }
  const wanted = new Set([...opt.targets.split(',').map((t) => t.trim()), ...wantedExtra]);
  for (let i = targets.length - 1; i >= 0; i--) if (!wanted.has(targets[i]!.key)) targets.splice(i, 1);
  const rows: Record<string, Row> = {};
  const ttfb: Record<string, TtfbResult> = {};
  const extra: Record<string, Extra> = {};
  const gatewayWarnings: [string, Map<string, number>][] = [];
  let soak: Soak | null = null;
  let streams: Streams | null = null;

  for (const t of targets) {
    if (isInterrupted()) return;
    const row: Row = (rows[t.key] = { label: t.label });
    let proc: Server | undefined;
    try {
      note(`starting ${t.label}`);
      proc = await t.start();
    } catch (err) {
      row.error = (err as Error).message.split('\n')[0];
      failures.push(`${t.label}: did not start: ${(err as Error).message.slice(0, 2000)}`);
      continue;
    }
    try {
      const url = proc.url + chatPath;
      const problem = await probe(url, t.auth, CHAT, isChat);
      if (problem) {
        row.error = problem;
        failures.push(`${t.label}: ${problem}`);
        continue;
      }
      // The process whose CPU and memory are measured: the proxy (for direct: the upstream itself).
      const pid = proc.pid;
      note(`${t.label}: warm-up ${WARM_S} s at c=50`);
      await load({ url, headers: t.auth, body: CHAT, connections: 50, seconds: WARM_S });
      await sleep(300);
      row.rssBefore = rssMb(pid);
      row.c1 = await loadTarget(t, { url, headers: t.auth, body: CHAT, connections: 1, seconds: C1_S, cpuPids: [pid] });
      await sleep(300);
      row.c50 = await loadTarget(t, {
        url,
        headers: t.auth,
        body: CHAT,
        connections: 50,
        seconds: C50_S,
        cpuPids: [pid, upstream.pid, SERVICE_PIDS.redis ?? 0, SERVICE_PIDS.postgres ?? 0],
      });
      if (t.own) row.gauges = await gatewayGauges(proc.url);
      await sleep(300);

      note(`${t.label}: streaming TTFB, ${TTFB_N} sequential streams`);
      const tt = (ttfb[t.key] = await ttfbRun({ url, headers: t.auth, body: CHAT_STREAM, n: TTFB_N, cpuPids: [pid] }));
      if (tt.failures) failures.push(`${t.label}, streaming: ${tt.failures} of ${TTFB_N} streams failed (${tt.firstFailure})`);

      if (t.key === 'lean') {
        const endpoints: [string, string, string, Headers, (b: string) => boolean][] = [
          ['embeddings', '/v1/embeddings', EMBED, auth, isEmbedding],
          ['anthropic', '/v1/anthropic/v1/messages', MESSAGES, anthropicAuth, isMessage],
          ['chat64k', '/v1/chat/completions', CHAT_64K, auth, isChat],
          ['openaiToAnthropic', chatPath, CHAT_ON_CLAUDE, auth, isChat],
          ['anthropicToOpenai', '/v1/anthropic/v1/messages', MESSAGES_ON_GPT, anthropicAuth, isMessage],
        ];
        for (const [key, p, body, headers, check] of endpoints) {
          const eurl = proc.url + p;
          const problem2 = await probe(eurl, headers, body, check);
          if (problem2) {
            extra[key] = { error: problem2 };
            failures.push(`${t.label}, ${p}: ${problem2}`);
            continue;
          }
          await load({ url: eurl, headers, body, connections: 50, seconds: 1 });
          extra[key] = await loadTarget({ label: `${t.label} ${p}` }, { url: eurl, headers, body, connections: 50, seconds: C50_S, cpuPids: [pid] });
        }
        // Stream TTFB of the Anthropic surface and of the translated pairs (the identity chat stream is the main table's).
        const streamed: [string, string, string, Headers, string][] = [
          ['anthropic', '/v1/anthropic/v1/messages', MESSAGES_STREAM, anthropicAuth, 'message_stop'],
          ['openaiToAnthropic', chatPath, CHAT_STREAM_ON_CLAUDE, auth, 'data: [DONE]'],
          ['anthropicToOpenai', '/v1/anthropic/v1/messages', MESSAGES_STREAM_ON_GPT, anthropicAuth, 'message_stop'],
        ];
        for (const [key, p, body, headers, done] of streamed) {
          const e = extra[key];
          if (!e || e.error) continue;
          const st = await ttfbRun({ url: proc.url + p, headers, body, n: TTFB_N, cpuPids: [pid], done });
          e.ttfb = st;
          if (st.failures) failures.push(`${t.label}, ${key} streaming: ${st.failures} of ${TTFB_N} streams failed (${st.firstFailure})`);
        }
      }
      await sleep(300);
      row.rssAfter = rssMb(pid);
      if (t.key === 'lean' && !opt['skip-soak']) {
        note(`${t.label}: soak, ${Number(opt['soak-requests']).toLocaleString('en-US')} requests at c=50 (RSS growth)`);
        soak = await soakRun(proc, url, t.auth);
      }
      const nStreams = Number(opt['table-streams']);
      if (t.key === 'lean' && nStreams > 0) streams = await concurrentStreams(nStreams, upstream, floor, proc, t.auth);
    } catch (err) {
      row.error = (err as Error).message.split('\n')[0];
      failures.push(`${t.label}: ${(err as Error).message}`);
    } finally {
      if (t.own && proc) {
        note(`stopping ${t.label}`);
        const code = await stopChild(proc);
        gatewayWarnings.push([t.label, proc.warnings]);
        // next start runs as `npm run start:next` does (NEXT_MANUAL_SIG_HANDLE=1): the gateway drains and exits 0.
        if (code !== 0 && code !== null) failures.push(`${t.label}: exited with ${code} on SIGTERM:\n${proc.output().slice(-2000)}`);
      }
    }
  }

  // ---- the table ----
  const out: string[] = [];
  out.push('', `Gateway benchmark — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`));
  out.push(`  runs: POST /v1/chat/completions (non-stream), warm-up ${WARM_S} s, c=1 for ${C1_S} s, c=50 for ${C50_S} s; latency = client-side, per request`);
  out.push('');
  const H = [
    'target',
    'c=1 req/s',
    'p50 ms',
    'p99 ms',
    'c=50 req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req c=1',
    'c=50',
    'RSS MB before',
    'after',
    'growth',
    'TTFB p50 ms',
    'p99 ms',
  ];
  const body = targets.map(({ key }) => {
    const r = rows[key]!;
    const tt = ttfb[key];
    if (r.error && !r.c50) return [r.label, `FAILED: ${r.error.slice(0, 100)}`, '', '', '', '', '', '', '', '', '', '', '', ''];
    return [
      r.label,
      fmt.rps(r.c1?.rps),
      fmt.ms(r.c1?.p50),
      fmt.ms(r.c1?.p99),
      fmt.rps(r.c50?.rps),
      fmt.ms(r.c50?.p50),
      fmt.ms(r.c50?.p99),
      fmt.us(r.c1?.cpuPerReq[0]),
      fmt.us(r.c50?.cpuPerReq[0]),
      fmt.mb(r.rssBefore),
      fmt.mb(r.rssAfter),
      fmt.pct((((r.rssAfter ?? NaN) - (r.rssBefore ?? NaN)) / (r.rssBefore ?? NaN)) * 100),
      fmt.ms(tt?.p50),
      fmt.ms(tt?.p99),
    ];
  });
  out.push(table(H, body, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']));
  out.push(
    `  CPU/RSS: the proxy process (direct: the upstream process itself). TTFB: ${TTFB_N} sequential streams of ${CHUNKS} chunks × ${CHUNK_MS} ms at c=1.`,
  );
  const measured = targets.flatMap((t) => {
    const c50 = rows[t.key]!.c50;
    return c50 ? [{ key: t.key, c50 }] : [];
  });
  out.push(`  upstream CPU µs/req during the c=50 runs: ${measured.map((m) => `${m.key} ${fmt.us(m.c50.cpuPerReq[1])}`).join(', ')}`);
  const svc = (i: number) => measured.filter((m) => Number.isFinite(m.c50.cpuPerReq[i])).map((m) => `${m.key} ${fmt.us(m.c50.cpuPerReq[i])}`);
  if (SERVICE_PIDS.redis) out.push(`  local Redis CPU µs/req during the c=50 runs: ${svc(2).join(', ')}`);
  if (SERVICE_PIDS.postgres) out.push(`  local PostgreSQL CPU µs/req (all backends) during the c=50 runs: ${svc(3).join(', ')}`);
  const queues = targets.flatMap((t) => {
    const g = rows[t.key]!.gauges;
    return g ? [`${t.key} ${g.logQueue} rows queued, ${g.limiterFallbacks} limiter calls answered in-process`] : [];
  });
  if (queues.length) out.push(`  gateway /metrics right after the c=50 run: ${queues.join('; ')}`);
  out.push('');
  const eh = ['lean /v1 path, c=50', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'stream TTFB p50 ms', 'p99 ms'];
  const erows = (
    [
      ['POST /v1/embeddings (1536 dims)', extra.embeddings],
      ['POST /v1/anthropic/v1/messages (Claude model: identity)', extra.anthropic],
      [`POST /v1/chat/completions (${Math.round(CHAT_64K.length / 1024)} KB body)`, extra.chat64k],
      ['OpenAI chat -> Anthropic channel (Claude model)', extra.openaiToAnthropic],
      ['Anthropic Messages -> OpenAI channel (GPT model)', extra.anthropicToOpenai],
    ] as [string, Extra | undefined][]
  ).map(([name, r]) =>
    r?.error || !r
      ? [name, `FAILED: ${(r?.error ?? 'not run').slice(0, 100)}`, '', '', '', '', '']
      : [name, fmt.rps(r.rps), fmt.ms(r.p50), fmt.ms(r.p99), fmt.us(r.cpuPerReq?.[0]), fmt.ms(r.ttfb?.p50), fmt.ms(r.ttfb?.p99)],
  );
  if (rows.lean) out.push(table(eh, erows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']));

  const lean = rows.lean;
  if (lean?.c50 && lean.c1 && rows.compare?.c50 && rows.compare.c1) {
    const [a50, b50, a1, b1] = [lean.c50, rows.compare.c50, lean.c1, rows.compare.c1];
    out.push(
      `  A/B, this build vs ${path.basename(compare ?? '')}: c=50 throughput ${((a50.rps / b50.rps) * 100).toFixed(0)}%, ` +
        `CPU/request ${(a50.cpuPerReq[0]! / b50.cpuPerReq[0]!).toFixed(2)}x, c=1 p50 ${fmt.ms(a1.p50 - b1.p50)} ms, ` +
        `stream TTFB p50 ${fmt.ms((ttfb.lean?.p50 ?? NaN) - (ttfb.compare?.p50 ?? NaN))} ms`,
    );
  }

  if (sink && lean?.c50 && lean.c1 && rows.traced?.c50 && rows.traced.c1) {
    const [a1, a50, b1, b50] = [lean.c1, lean.c50, rows.traced.c1, rows.traced.c50];
    const us = (x: number, y: number) => `${fmt.us(x)} -> ${fmt.us(y)} µs (${y >= x ? '+' : ''}${fmt.us(y - x)}, ${((y / x - 1) * 100).toFixed(0)}%)`;
    out.push(
      `  Tracing off -> on (every request sampled, ${sink.exports} OTLP exports, ${(sink.bytes / 2 ** 20).toFixed(1)} MB received): ` +
        `CPU/request c=1 ${us(a1.cpuPerReq[0]!, b1.cpuPerReq[0]!)}, c=50 ${us(a50.cpuPerReq[0]!, b50.cpuPerReq[0]!)}; ` +
        `c=50 throughput ${((b50.rps / a50.rps) * 100).toFixed(0)}%; stream TTFB p50 ${fmt.ms(ttfb.lean?.p50)} -> ${fmt.ms(ttfb.traced?.p50)} ms`,
    );
  }
  await sink?.close();

  // ---- targets ----
  out.push(...targetLines(rows, ttfb, soak, streams));
  if (soak) out.push('', ...soakLines(soak));
  if (streams) out.push('', ...streams.lines);
  out.push(...warningLines(gatewayWarnings));
  process.stdout.write(`${out.join('\n')}\n`);
}

interface Check {
  name: string;
  gw: string;
  pass: boolean;
  show: string;
}

/** The targets of the lean path (and of next start, for comparison) against the floor and direct; counts the lean path's misses. */
function targetLines(rows: Record<string, Row>, ttfb: Record<string, TtfbResult>, soak: Soak | null, streams: Streams | null): string[] {
  const d = rows.direct;
  const f = rows.floor;
  const checks: Check[] = [];
  const check = (name: string, gw: string, pass: boolean, show: string) => checks.push({ name, gw, pass, show });
  const gwKeys = ['lean', 'next'].filter((k) => rows[k]);
  const ok = (x: number) => Number.isFinite(x);
  for (const key of gwKeys) {
    const g = rows[key]!;
    const thr = g.c50 && f?.c50 ? g.c50.rps / f.c50.rps : NaN;
    check(
      'throughput c=50 >= 60% of floor',
      key,
      ok(thr) && thr >= 0.6,
      `${(thr * 100).toFixed(0)}% (${fmt.rps(g.c50?.rps)} vs ${fmt.rps(f?.c50?.rps)} req/s)`,
    );
    const cpu = g.c50 && f?.c50 ? g.c50.cpuPerReq[0]! / f.c50.cpuPerReq[0]! : NaN;
    check('CPU/request <= 1.7x floor', key, ok(cpu) && cpu <= 1.7, `${cpu.toFixed(2)}x (${fmt.us(g.c50?.cpuPerReq[0])} vs ${fmt.us(f?.c50?.cpuPerReq[0])} µs)`);
    const a50 = g.c1 && d?.c1 ? g.c1.p50 - d.c1.p50 : NaN;
    check('added latency c=1 p50 < 1 ms', key, ok(a50) && a50 < 1, `${fmt.ms(a50)} ms`);
    const a99 = g.c1 && d?.c1 ? g.c1.p99 - d.c1.p99 : NaN;
    check('added latency c=1 p99 < 5 ms', key, ok(a99) && a99 < 5, `${fmt.ms(a99)} ms`);
    const tg = ttfb[key];
    const td = ttfb.direct;
    const t50 = tg && td ? tg.p50 - td.p50 : NaN;
    check('streaming added TTFB p50 < 1 ms', key, ok(t50) && t50 < 1, `${fmt.ms(t50)} ms (p99 ${fmt.ms((tg?.p99 ?? NaN) - (td?.p99 ?? NaN))} ms)`);
    // Chunks forwarded as they arrive: as many reads of the body per stream as straight from the
    // upstream, and the same spacing between them (a proxy that batched would show fewer, further apart).
    if (tg && td) {
      const asTheyArrive = tg.reads50 >= td.reads50 && tg.gap50 <= td.gap50 + 1;
      check(
        'stream chunks forwarded as they arrive',
        key,
        asTheyArrive,
        `${tg.reads50} reads/stream, gap p50 ${fmt.ms(tg.gap50)} ms (direct ${td.reads50}, ${fmt.ms(td.gap50)} ms)`,
      );
    }
    if (key === 'lean' && soak) {
      check('RSS growth over 100k requests < 10%', key, soak.pass, `${fmt.pct(soak.growth * 100)} (${fmt.mb(soak.before)} → ${fmt.mb(soak.after)} MB)`);
    } else {
      const rss = ((g.rssAfter ?? NaN) - (g.rssBefore ?? NaN)) / (g.rssBefore ?? NaN);
      check(
        'RSS growth over 100k requests < 10%',
        key,
        ok(rss) && rss < 0.1,
        `over the table's runs: ${fmt.pct(rss * 100)} (${fmt.mb(g.rssBefore)} → ${fmt.mb(g.rssAfter)} MB)`,
      );
    }
    const s = streams?.results;
    if (key === 'lean' && s?.lean) {
      const { n, ok: done, wall } = s.lean;
      check(
        `${n.toLocaleString('en-US')} concurrent streams served`,
        key,
        done === n,
        `${done}/${n} in ${wall.toFixed(2)} s (direct ${s.direct?.wall.toFixed(2) ?? '—'} s, floor ${s.floor?.wall.toFixed(2) ?? '—'} s)`,
      );
    }
  }
  const out = ['', 'Targets (the lean path is what `npm start` serves; next start shown for comparison)'];
  const tgtRows: string[][] = [];
  for (const name of [...new Set(checks.map((c) => c.name))]) {
    const row = [name];
    for (const key of gwKeys) {
      const c = checks.find((x) => x.name === name && x.gw === key);
      if (!c) row.push('—', 'not measured');
      else row.push(c.pass ? 'PASS' : 'FAIL', c.show);
    }
    tgtRows.push(row);
  }
  const tgtHead = ['target', ...gwKeys.flatMap((k) => [k === 'lean' ? 'lean' : 'next start', 'measured'])];
  if (tgtRows.length)
    out.push(
      table(
        tgtHead,
        tgtRows,
        tgtHead.map(() => 'l'),
      ),
    );
  missed.count += checks.filter((c) => c.gw === 'lean' && !c.pass).length;
  return out;
}

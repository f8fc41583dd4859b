// --footprint: memory per instance and latency under load, PostgreSQL setup against the embedded
// default (and their GATEWAY_ONLY variants, and PGlite inline for A/B).
import path from 'node:path';
import { isInterrupted, note, runNode, sleep, stopChild, type Server } from '../lib/children';
import { Samples, load, probe, rssMb, type Headers } from '../lib/measure';
import { C50_S, WARM_S, opt } from '../lib/options';
import { failures, fmt, missed, recordRun, table, warningLines } from '../lib/report';
import { memoryGauges, settledMemory, startMeasuredGateway, startMeasuredGatewayOnly, type GatewayEnv, type MemoryGauges } from '../lib/services';
import { CHAT, isChat } from '../lib/workloads';
import type { RunContext } from './context';

interface Accumulated {
  lat: Samples;
  requests: number;
  wall: number;
  cpu: number;
  loopMax: number;
}

interface Summary {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  cpuPerReq: number[];
  loopMax: number;
}

type Memory = MemoryGauges & { rss: number };

interface Row {
  label: string;
  error?: string;
  start?: Memory;
  warm?: Memory;
  after?: Memory;
  peak: number;
  c50run?: Accumulated;
  soakRun?: Accumulated;
  c50?: Summary;
  soak?: Summary;
}

interface Setup {
  label: string;
  prepare: () => Promise<{ env: GatewayEnv; headers: Headers }>;
  needs?: 'pg';
}

/**
 * Per setup, one gateway process: RSS at idle right after start (before any request), after the
 * warm-up, and after the c=50 runs and the soak; latency, CPU and the longest event-loop stall of
 * the c=50 runs and of the soak. Setups: `pg` (npm start with PostgreSQL and Redis), `embedded`
 * (no DATABASE_URL/REDIS_URL: PGlite in its worker thread, the default), `embedded-inline`
 * (PGLITE_MODE=inline: PGlite on the request thread, as before), and the `-gateway-only` variants
 * (GATEWAY_ONLY=1: no Next.js). All setups run at once (each embedded one on its own DATA_DIR) and
 * the load is interleaved: --footprint-rounds rounds, each giving every setup C50_S/rounds seconds
 * at c=50 and soak/rounds requests, in rotating order, so a busy moment of a shared machine does
 * not land on one setup only.
 */
export async function runFootprint({ gatewayEnv, auth, header, work }: RunContext): Promise<void> {
  const soakN = Number(opt['footprint-soak']);
  const rounds = Math.max(1, Number(opt['footprint-rounds']));
  const embedded = async (name: string, extra: Record<string, string>) => {
    const env: GatewayEnv = { ...gatewayEnv, DATA_DIR: path.join(work, `data-${name}`), ...extra };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    note(`${name}: migrations and the benchmark account on its own embedded database`);
    await runNode(['--import', 'tsx', 'scripts/migrate.ts'], env);
    const out = await runNode(['--import', 'tsx', 'bench/setup-account.ts'], env);
    const line = out.split('\n').find((l) => l.includes('"apiKey"'));
    if (!line) throw new Error(`setup-account printed no key:\n${out}`);
    return { env, headers: { authorization: `Bearer ${(JSON.parse(line) as { apiKey: string }).apiKey}` } };
  };
  const all: Record<string, Setup> = {
    pg: { label: 'PostgreSQL + Redis, npm start', prepare: async () => ({ env: gatewayEnv, headers: auth }), needs: 'pg' },
    'pg-gateway-only': {
      label: 'PostgreSQL + Redis, GATEWAY_ONLY=1',
      prepare: async () => ({ env: { ...gatewayEnv, GATEWAY_ONLY: '1' }, headers: auth }),
      needs: 'pg',
    },
    embedded: { label: 'embedded (PGlite thread), npm start', prepare: () => embedded('embedded', {}) },
    'embedded-inline': { label: 'embedded, PGLITE_MODE=inline', prepare: () => embedded('embedded-inline', { PGLITE_MODE: 'inline' }) },
    'embedded-gateway-only': { label: 'embedded (PGlite thread), GATEWAY_ONLY=1', prepare: () => embedded('embedded-gateway-only', { GATEWAY_ONLY: '1' }) },
  };
  const keys = opt['footprint-setups']
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of keys) if (!all[k]) throw new Error(`--footprint-setups: unknown setup ${k} (known: ${Object.keys(all).join(', ')})`);
  const rows: Record<string, Row> = {};
  const live: { key: string; gw: Server; headers: Headers; url: string }[] = [];
  const warnings: [string, Map<string, number>][] = [];
  const newRun = (): Accumulated => ({ lat: new Samples(), requests: 0, wall: 0, cpu: 0, loopMax: 0 });
  const summarize = (r: Accumulated): Summary => {
    const [p50, p99] = r.lat.percentiles(50, 99) as [number, number];
    return { requests: r.requests, rps: r.requests / r.wall, p50, p99, cpuPerReq: [r.requests ? r.cpu / r.requests : NaN], loopMax: r.loopMax };
  };
  try {
    for (const key of keys) {
      if (isInterrupted()) return;
      const setup = all[key]!;
      const row: Row = (rows[key] = { label: setup.label, peak: 0 });
      if (setup.needs === 'pg' && !gatewayEnv.DATABASE_URL) {
        row.error = 'no PostgreSQL reachable';
        continue;
      }
      try {
        const { env, headers } = await setup.prepare();
        note(`starting ${setup.label}`);
        const gw = env.GATEWAY_ONLY === '1' ? await startMeasuredGatewayOnly(env) : await startMeasuredGateway(env);
        live.push({ key, gw, headers, url: gw.url + '/v1/chat/completions' });
        await sleep(1000);
        row.start = await settledMemory(gw);
        const problem = await probe(gw.url + '/v1/chat/completions', headers, CHAT, isChat);
        if (problem) throw new Error(problem);
        note(`${setup.label}: warm-up ${WARM_S} s at c=50`);
        await load({ url: gw.url + '/v1/chat/completions', headers, body: CHAT, connections: 50, seconds: WARM_S });
        await sleep(1500); // the request-log writer drains
        row.warm = await settledMemory(gw);
        row.c50run = newRun();
        row.soakRun = newRun();
      } catch (err) {
        row.error = (err as Error).message.split('\n')[0];
        failures.push(`${setup.label}: ${(err as Error).message.slice(0, 2000)}`);
      }
    }
    const ready = live.filter((l) => !rows[l.key]!.error);
    const sampler = setInterval(() => {
      for (const l of ready) rows[l.key]!.peak = Math.max(rows[l.key]!.peak, rssMb(l.gw.pid));
    }, 500);
    try {
      for (const phase of ['c50run', 'soakRun'] as const) {
        for (let round = 0; round < rounds; round++) {
          if (isInterrupted()) return;
          const order = ready.map((_, i) => ready[(i + round) % ready.length]!);
          note(
            `${phase === 'c50run' ? `c=50, ${(C50_S / rounds).toFixed(1)} s` : `soak, ${Math.round(soakN / rounds).toLocaleString('en-US')} requests at c=50`} per setup, round ${round + 1} of ${rounds}`,
          );
          for (const l of order) {
            const acc = rows[l.key]![phase]!;
            await memoryGauges(l.gw.url); // resets the event-loop delay histogram
            const spec = {
              url: l.url,
              headers: l.headers,
              body: CHAT,
              connections: 50,
              cpuPids: [l.gw.pid],
              into: acc.lat,
              ...(phase === 'c50run' ? { seconds: C50_S / rounds } : { amount: Math.round(soakN / rounds) }),
            };
            const r = recordRun(`${rows[l.key]!.label}, ${phase === 'c50run' ? 'c=50' : 'soak'}`, await load(spec));
            const g = await memoryGauges(l.gw.url);
            acc.requests += r.requests;
            acc.wall += r.wall;
            acc.cpu += r.cpuPerReq[0]! * r.requests;
            acc.loopMax = Math.max(acc.loopMax, g.loopMax || 0);
            await sleep(200);
          }
        }
      }
    } finally {
      clearInterval(sampler);
    }
    await sleep(2000); // the request-log writers drain
    for (const l of ready) {
      const row = rows[l.key]!;
      row.c50 = summarize(row.c50run!);
      row.soak = summarize(row.soakRun!);
      row.after = await settledMemory(l.gw);
    }
  } finally {
    for (const l of live) {
      note(`stopping ${rows[l.key]!.label}`);
      const code = await stopChild(l.gw);
      warnings.push([rows[l.key]!.label, l.gw.warnings]);
      if (code !== 0 && code !== null) failures.push(`${rows[l.key]!.label}: exited with ${code} on SIGTERM:\n${l.gw.output().slice(-2000)}`);
    }
  }

  const out = ['', `Gateway footprint — ${new Date().toISOString()}`, ...header.map((h) => `  ${h}`)];
  out.push(
    `  every setup is its own process, all running at once; RSS of the process tree after two full GCs: at idle after start, after a ${WARM_S} s warm-up at c=50, after the c=50 runs (${C50_S} s) and the soak (${soakN.toLocaleString('en-US')} requests), both interleaved across setups in ${rounds} rounds`,
  );
  out.push('');
  const H = [
    'setup',
    'RSS MB start',
    'warm',
    'after soak',
    'peak',
    'heap MB after',
    'c=50 req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'loop max ms',
    'soak req/s',
    'p99 ms',
    'loop max ms',
  ];
  const body = keys.map((k) => {
    const r = rows[k]!;
    if (!r.c50 || !r.soak) return [r.label, `FAILED: ${(r.error ?? '').slice(0, 100)}`, ...H.slice(2).map(() => '')];
    return [
      r.label,
      fmt.mb(r.start?.rss),
      fmt.mb(r.warm?.rss),
      fmt.mb(r.after?.rss),
      fmt.mb(r.peak),
      fmt.mb(r.after?.heapUsed),
      fmt.rps(r.c50.rps),
      fmt.ms(r.c50.p50),
      fmt.ms(r.c50.p99),
      fmt.us(r.c50.cpuPerReq[0]),
      fmt.ms(r.c50.loopMax),
      fmt.rps(r.soak.rps),
      fmt.ms(r.soak.p99),
      fmt.ms(r.soak.loopMax),
    ];
  });
  out.push(table(H, body, ['l', ...H.slice(1).map(() => 'r' as const)]));
  out.push("  loop max: the longest the gateway's event loop was held during those runs (monitorEventLoopDelay, from /metrics)");
  out.push(
    "  external memory (ArrayBuffers; PGlite's WebAssembly memory when inline) after the soak: " +
      keys
        .flatMap((k) => {
          const after = rows[k]!.after;
          return after ? [`${k} ${fmt.mb(after.external)} MB`] : [];
        })
        .join(', '),
  );

  const checks: [string, boolean, string][] = [];
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? a / b : NaN);
  const pg = rows.pg?.c50;
  for (const k of ['embedded', 'embedded-gateway-only', 'embedded-inline']) {
    const e = rows[k]?.c50;
    if (!e || !pg) continue;
    const x = ratio(e.p99, pg.p99);
    checks.push([`c=50 p99 ${k} within 2x of pg`, x <= 2, `${x.toFixed(2)}x (${fmt.ms(e.p99)} vs ${fmt.ms(pg.p99)} ms)`]);
    const xs = ratio(rows[k]!.soak?.p99, rows.pg!.soak?.p99);
    checks.push([`soak p99 ${k} within 2x of pg`, xs <= 2, `${xs.toFixed(2)}x (${fmt.ms(rows[k]!.soak?.p99)} vs ${fmt.ms(rows.pg!.soak?.p99)} ms)`]);
  }
  const pgOnly = rows['pg-gateway-only'];
  if (pgOnly?.warm)
    checks.push([
      'GATEWAY_ONLY=1 with PostgreSQL+Redis idle RSS < 150 MB',
      pgOnly.warm.rss < 150,
      `${fmt.mb(pgOnly.start?.rss)} MB idle after start, ${fmt.mb(pgOnly.warm.rss)} MB idle after warm-up`,
    ]);
  // Issue 39 item 8: the default install (npm start, no DATABASE_URL) fits a 512 MB machine.
  const emb = rows.embedded;
  if (emb?.start && emb.after)
    checks.push([
      `npm start embedded RSS < 450 MB after start and after the soak (${soakN.toLocaleString('en-US')} requests)`,
      emb.start.rss < 450 && emb.after.rss < 450,
      `${fmt.mb(emb.start.rss)} MB after start, ${fmt.mb(emb.after.rss)} MB after the c=50 runs and the soak`,
    ]);
  const embOnly = rows['embedded-gateway-only'];
  if (embOnly?.warm)
    checks.push([
      'GATEWAY_ONLY=1 embedded idle RSS < 300 MB',
      embOnly.warm.rss < 300,
      `${fmt.mb(embOnly.start?.rss)} MB idle after start, ${fmt.mb(embOnly.warm.rss)} MB idle after warm-up`,
    ]);
  for (const [a, b] of [
    ['pg-gateway-only', 'pg'],
    ['embedded', 'embedded-inline'],
    ['embedded-gateway-only', 'embedded'],
  ] as const) {
    const ra = rows[a]?.c50;
    const rb = rows[b]?.c50;
    if (!ra || !rb) continue;
    checks.push([
      `${a} vs ${b}: throughput, CPU/request (A/B)`,
      ra.rps >= rb.rps * 0.9 && ra.cpuPerReq[0]! <= rb.cpuPerReq[0]! * 1.1,
      `${fmt.pct((ra.rps / rb.rps - 1) * 100)} req/s, ${fmt.pct((ra.cpuPerReq[0]! / rb.cpuPerReq[0]! - 1) * 100)} CPU µs/req (within 10% passes)`,
    ]);
  }
  if (checks.length)
    out.push(
      '',
      table(
        ['target', '', 'measured'],
        checks.map(([n, p, m]) => [n, p ? 'PASS' : 'FAIL', m]),
        ['l', 'l', 'l'],
      ),
    );
  out.push(...warningLines(warnings));
  process.stdout.write(`${out.join('\n')}\n`);
  missed.count += checks.filter((c) => !c[1]).length;
}

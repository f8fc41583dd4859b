// Summarises a V8 .cpuprofile (node --cpu-prof): top functions by self time, and self time per
// package / source file, optionally only for samples inside a time window.
//
// Usage: node bench/profile-summary.mjs FILE.cpuprofile [--from US] [--to US] [--top 30]
//   --from/--to: CLOCK_MONOTONIC microseconds (process.hrtime.bigint() / 1000n in any process
//   on the machine), e.g. the start and end of a load run; default: the whole profile.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

export function summarise(profile, { from = -Infinity, to = Infinity, top = 30 } = {}) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from || t > to) continue;
    // A sample's weight is the interval until the next sample.
    const w = profile.timeDeltas[i + 1] ?? dt;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + w);
    total += w;
  }
  const byFn = new Map();
  const byPkg = new Map();
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { callFrame: cf } = nodes.get(id);
    if (cf.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const file = cf.url ? cf.url.replace(/^file:\/\//, '') : '';
    const fn = `${cf.functionName || '(anonymous)'}  ${file ? `${shortFile(file)}:${cf.lineNumber + 1}` : ''}`.trim();
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    const pkg = packageOf(file, cf.functionName);
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
  }
  // Inclusive time of the application's own functions (the gateway bundle / Next server chunks):
  // each sample counts once for every distinct app function on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const appInclusive = new Map();
  for (const [id, us] of selfUs) {
    if (nodes.get(id).callFrame.functionName === '(idle)') continue;
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = nodes.get(cur).callFrame;
      if (!APP_FILE.test(cf.url)) continue;
      const key = `${cf.functionName || '(anonymous)'}  ${shortFile(cf.url.replace(/^file:\/\//, ''))}:${cf.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      appInclusive.set(key, (appInclusive.get(key) ?? 0) + us);
    }
  }
  const sort = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    totalUs: total - idle,
    idleUs: idle,
    functions: sort(byFn).slice(0, top),
    packages: sort(byPkg).slice(0, top),
    app: sort(appInclusive).slice(0, top),
  };
}

const APP_FILE = /dist\/server\.mjs|\.next\/server\/|bench\/\.ab\/server-[^/]*\.mjs/;

function shortFile(file) {
  const i = file.lastIndexOf('node_modules/');
  if (i !== -1) return file.slice(i + 'node_modules/'.length);
  return file.includes('/') ? path.relative(process.cwd(), file) || file : file;
}

function packageOf(file, fn) {
  if (!file) return fn.startsWith('(') ? fn : '(native / V8 builtins)';
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/')[0]}`;
  const i = file.lastIndexOf('node_modules/');
  if (i !== -1) {
    const parts = file.slice(i + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return shortFile(file);
}

export function formatSummary(s) {
  const pct = (us) => `${((us / s.totalUs) * 100).toFixed(1).padStart(5)}%`;
  const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  return [
    `busy: ${(s.totalUs / 1000).toFixed(0)} ms of samples (idle ${(s.idleUs / 1000).toFixed(0)} ms not shown); percentages of busy time`,
    '',
    'self time by package / file:',
    ...s.packages.map(([k, us]) => `  ${pct(us)} ${ms(us)}  ${k}`),
    '',
    'top functions by self time:',
    ...s.functions.map(([k, us]) => `  ${pct(us)} ${ms(us)}  ${k}`),
    '',
    'application functions by inclusive time (self + everything they call):',
    ...s.app.map(([k, us]) => `  ${pct(us)} ${ms(us)}  ${k}`),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string', default: '30' } },
  });
  if (!positionals[0]) {
    process.stderr.write('usage: node bench/profile-summary.mjs FILE.cpuprofile [--from US] [--to US] [--top N]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
  const s = summarise(profile, {
    from: values.from ? Number(values.from) : undefined,
    to: values.to ? Number(values.to) : undefined,
    top: Number(values.top),
  });
  process.stdout.write(`${formatSummary(s)}\n`);
}

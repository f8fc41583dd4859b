// What a run reports: number formats, plain-text tables, the failed runs and missed targets that
// decide the exit code, and the warnings the gateways logged.

export const fmt = {
  rps: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  ms: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(2) : '—'),
  us: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  mb: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v.toFixed(0) : '—'),
  pct: (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : '—'),
};

export function table(headers: string[], rows: (string | number)[][], align: ('l' | 'r')[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: (string | number)[]) =>
    cells.map((c, i) => (align[i] === 'l' ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Any error, timeout or non-2xx, with where it happened: the run exits 1 when there is one. */
export const failures: string[] = [];

/** Targets missed (the run exits 3 with --strict when there is one). */
export const missed = { count: 0 };

export function recordRun<R extends { errors: number; non2xx: number; bad: string[]; requests: number }>(label: string, r: R): R {
  if (r.errors || r.non2xx) failures.push(`${label}: ${r.errors} errors/timeouts, ${r.non2xx} non-2xx${r.bad.length ? ` (${r.bad.join(', ')})` : ''}`);
  if (r.requests === 0) failures.push(`${label}: no successful requests`);
  return r;
}

export function warningLines(list: [string, Map<string, number>][]): string[] {
  const out: string[] = [];
  for (const [label, warnings] of list) {
    if (warnings.size === 0) continue;
    out.push('', `${label} logged warnings/errors during the run (count × message):`);
    for (const [msg, n] of [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 8)) out.push(`  ${String(n).padStart(6)} × ${msg}`);
  }
  return out;
}

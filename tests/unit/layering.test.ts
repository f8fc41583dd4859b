import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// The floor plan of lib/ (docs/decisions/060-floor-plan.md). Every folder and top-level module of
// lib/ stands on one floor; a module imports only from its own floor or the floors below, and no
// two of them import each other, not even two on the same floor. Static imports, re-exports,
// `import type` and `import()` all count: a lazy or type-only edge is still an edge of the design.
// app/, components/ and the server entry files stand above all of lib/.
//
// A new folder goes on the floor its imports put it; the test fails until it is listed.
const FLOORS: string[][] = [
  // Base values and process plumbing: they import nothing above this floor.
  [
    'generated',
    'singleton',
    'env',
    'password-rules',
    'i18n',
    'errors',
    'log',
    'metrics',
    'money',
    'pricing',
    'format',
    'backoff',
    'secrets',
    'crypto',
    'redis-client',
    'periodic',
    'telemetry',
    'theme',
    'sso-config',
    'json',
  ],
  ['db'],
  ['audit', 'mail'],
  ['config'],
  // The route schemas (zod): shared by the account API's routes, its forms and /openapi.json.
  ['schemas'],
  ['region'],
  ['limits'],
  ['events'],
  ['billing'],
  ['plans'],
  ['keys'],
  ['accounts'],
  ['auth'],
  ['orgs'],
  ['alerts'],
  ['channels'],
  ['cache'],
  ['shutdown'],
  // The /v1 gateway with the work it runs as jobs (videos, files, batches) inside it.
  ['gateway'],
  // The console and the account API on top of the gateway.
  ['dashboard'],
  ['http', 'statements'],
  ['admin', 'log-export', 'ops'],
  ['import'],
];

const root = path.resolve(__dirname, '../..');
const lib = path.join(root, 'lib');
const floorOf = new Map(FLOORS.flatMap((units, i) => units.map((u) => [u, i] as const)));

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (name === 'generated' || name === 'node_modules') continue;
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const rel = (file: string) => path.relative(root, file).split(path.sep).join('/');

/** The floor plan's unit of a path under lib/: its folder, or the module name of a top-level file. */
function unitOf(relPath: string): string | null {
  const parts = relPath.split('/');
  if (parts[0] !== 'lib') return null;
  return parts.length === 2 ? parts[1].replace(/\.tsx?$/, '') : parts[1];
}

function resolve(from: string, spec: string): string | null {
  let base: string;
  if (spec.startsWith('@/')) base = path.join(root, spec.slice(2));
  else if (spec.startsWith('.')) base = path.resolve(path.dirname(from), spec);
  else return null;
  if (rel(base).startsWith('lib/generated')) return base;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

// `… from '…'` (imports and re-exports, type-only ones too), `import '…'` and `import('…')`.
// Comments are blanked first so a path quoted in prose does not count.
const IMPORT = /\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

interface Edge {
  file: string;
  spec: string;
  target: string;
  lazy: boolean;
}

function importsOf(file: string): Edge[] {
  const text = stripComments(readFileSync(file, 'utf8'));
  const found: Edge[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    const target = resolve(file, spec);
    if (target) found.push({ file: rel(file), spec, target: rel(target), lazy: m[3] !== undefined });
  }
  return found;
}

const files = walk(lib);
const edges = files.flatMap(importsOf);
const unitEdges = edges.flatMap((e) => {
  const from = unitOf(e.file);
  const to = unitOf(e.target);
  return from && to && from !== to ? [{ ...e, from, to }] : [];
});
const units = new Set(
  readdirSync(lib)
    .map((name) => name.replace(/\.tsx?$/, ''))
    .filter((n) => !n.endsWith('.d')),
);

describe('floor plan of lib/', () => {
  it('finds the modules and imports it checks, dynamic and type-only ones included', () => {
    expect(files.length).toBeGreaterThan(200);
    const has = (file: string, target: string) => edges.some((e) => e.file === file && e.target === target);
    expect(has('lib/billing/ledger.ts', 'lib/money.ts')).toBe(true);
    // `await import('@/lib/log')` in the writer, `import type` in the limiter's Redis store.
    expect(edges.some((e) => e.file === 'lib/billing/writer.ts' && e.spec === '@/lib/log')).toBe(true);
    expect(unitEdges.some((e) => e.from === 'gateway' && e.to === 'channels')).toBe(true);
  });

  it('places every folder and top-level module of lib/ on one floor', () => {
    expect([...units].filter((u) => !floorOf.has(u)).sort()).toEqual([]);
    expect([...floorOf.keys()].filter((u) => !units.has(u)).sort()).toEqual([]);
    expect(FLOORS.flat().length).toBe(floorOf.size);
  });

  it('has no import from a higher floor', () => {
    const upward = unitEdges
      .filter((e) => floorOf.get(e.to)! > floorOf.get(e.from)!)
      .map((e) => `${e.file} imports '${e.spec}' (${e.from} is on floor ${floorOf.get(e.from)}, ${e.to} on floor ${floorOf.get(e.to)})`);
    expect(upward).toEqual([]);
  });

  it('has no two folders that import each other, directly or round a circle', () => {
    const next = new Map<string, Set<string>>();
    for (const e of unitEdges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
    // A circle of units: some edge a -> b with a reachable from b.
    const reaches = (from: string, goal: string, seen = new Set<string>()): boolean => {
      if (from === goal) return true;
      seen.add(from);
      return [...(next.get(from) ?? [])].some((n) => !seen.has(n) && reaches(n, goal, seen));
    };
    const circles = unitEdges.filter((e) => reaches(e.to, e.from)).map((e) => `${e.file} imports '${e.spec}' (${e.from} -> ${e.to} -> … -> ${e.from})`);
    expect(circles).toEqual([]);
  });

  it('lib/ imports nothing from app/, components/ or the server entry files', () => {
    const above = edges.filter((e) => !e.target.startsWith('lib/')).map((e) => `${e.file} imports '${e.spec}'`);
    expect(above).toEqual([]);
  });

  // Between files inside one folder a lazy `import()` may close a circle (it runs after both loaded).
  it('has no import circle between the modules of lib/', () => {
    const graph = new Map<string, string[]>();
    for (const e of edges)
      if (!e.lazy && e.target.startsWith('lib/') && !e.target.startsWith('lib/generated')) graph.set(e.file, [...(graph.get(e.file) ?? []), e.target]);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const n of graph.get(file) ?? []) {
        const s = state.get(n);
        if (s === 'open') circles.push([...stack.slice(stack.indexOf(n)), n].join(' -> '));
        else if (!s) visit(n);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files.map(rel)) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});

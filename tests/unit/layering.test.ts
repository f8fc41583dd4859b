import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// The layers of lib/: a lower layer imports nothing from a higher one, and no module imports itself
// back through a circle. Static imports and re-exports count; `await import()` is a deliberate lazy edge.

const root = path.resolve(__dirname, '../..');
const LOWER = ['lib/limits', 'lib/billing', 'lib/auth', 'lib/db', 'lib/config'];
const HIGHER = ['lib/gateway', 'lib/http', 'lib/dashboard', 'app'];

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
const within = (file: string, dirs: string[]) => dirs.some((d) => file === `${d}.ts` || file.startsWith(`${d}/`));

function resolve(from: string, spec: string): string | null {
  let base: string;
  if (spec.startsWith('@/')) base = path.join(root, spec.slice(2));
  else if (spec.startsWith('.')) base = path.resolve(path.dirname(from), spec);
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), path.join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const target = resolve(file, m[1] ?? m[2]);
    if (target) found.push(target);
  }
  return found;
}

const files = walk(path.join(root, 'lib'));
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('layering', () => {
  it('finds the modules it checks', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(graph.get(path.join(root, 'lib/billing/ledger.ts'))?.length).toBeGreaterThan(0);
  });

  it('lower layers (limits, billing, auth, db, config) import nothing from gateway, http, dashboard or app', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      if (!within(rel(file), LOWER)) continue;
      for (const target of targets) if (within(rel(target), HIGHER)) wrong.push(`${rel(file)} -> ${rel(target)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has no import circle in lib/', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue;
        const s = state.get(next);
        if (s === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].map(rel).join(' -> '));
        else if (!s) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});

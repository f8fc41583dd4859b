import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// #37 item 1: Next renders a page in parallel with its layouts, so a guard in a layout protects
// nothing. Every operator-console and dashboard page checks its visitor itself, before anything
// else it awaits (its route params aside), and the console's pages load data only through the
// guarded loaders of lib/admin/console.ts. tests/integration/console-exposure.test.ts checks the
// answers of the built server; this catches a new page without its guard before any build.

const root = path.resolve(__dirname, '../..');

function pages(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...pages(full));
    else if (name === 'page.tsx') out.push(full);
  }
  return out;
}

/** The awaits of the default export, in order (its route params excepted). */
function awaitsOfDefaultExport(source: string): string[] {
  const start = source.indexOf('export default');
  expect(start).toBeGreaterThanOrEqual(0);
  return [...source.slice(start).matchAll(/await\s+([\w.]+)/g)].map((m) => m[1]).filter((name) => name !== 'params' && name !== 'searchParams');
}

const rel = (f: string) => path.relative(root, f);

describe('page guards', () => {
  const admin = pages(path.join(root, 'app/(admin)'));
  const dashboard = pages(path.join(root, 'app/(dashboard)'));

  it('finds the pages', () => {
    expect(admin.length).toBeGreaterThanOrEqual(10);
    expect(dashboard.length).toBeGreaterThanOrEqual(10);
  });

  it.each(admin.map(rel))('%s calls requireOperator() before anything else', (file) => {
    expect(awaitsOfDefaultExport(readFileSync(path.join(root, file), 'utf8'))[0]).toBe('requireOperator');
  });

  it.each(admin.map(rel))('%s loads data only through lib/admin/console.ts', (file) => {
    const source = readFileSync(path.join(root, file), 'utf8');
    for (const m of source.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+'@\/lib\/admin\/([\w-]+)'/gm)) {
      const [, typeOnly, names, module] = m;
      if (typeOnly || module === 'console' || module === 'guard') continue;
      // Pure helpers (no I/O) may come from elsewhere.
      const values = names
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n && !n.startsWith('type '));
      expect(
        values.filter((n) => !['adminFilterQuery'].includes(n)),
        `${file} imports from lib/admin/${module}`,
      ).toEqual([]);
    }
  });

  // requirePageAccount (lib/dashboard/session.ts) is requirePageUser first, then the selected
  // organization and the role's check of the page (docs/decisions/054).
  it.each(dashboard.map(rel).filter((f) => !f.includes('[...missing]')))('%s calls requirePageUser() before anything else', (file) => {
    const awaits = awaitsOfDefaultExport(readFileSync(path.join(root, file), 'utf8'));
    expect(['requirePageUser', 'requirePageAccount']).toContain(awaits[0]);
  });

  it('requirePageAccount asks requirePageUser before anything else', () => {
    const source = readFileSync(path.join(root, 'lib/dashboard/session.ts'), 'utf8');
    const body = source.slice(source.indexOf('export async function requirePageAccount'));
    expect([...body.matchAll(/await\s+([\w.]+)/g)].map((m) => m[1])[0]).toBe('requirePageUser');
  });
});

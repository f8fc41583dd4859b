// Decision 058's measure of issue 39, item 1: following the request from `runPipeline`, the walk
// returns to a module it left at most half as often as before the rewrite (28 returns then).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requestWalk } from '../../scripts/request-walk';

const BEFORE_THE_REWRITE = 28;

describe('the request walk', () => {
  const fixture = mkdtempSync(path.join(tmpdir(), 'request-walk-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('counts stops and returns as decision 058 says', () => {
    mkdirSync(path.join(fixture, 'lib/gateway'), { recursive: true });
    writeFileSync(
      path.join(fixture, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'esnext', moduleResolution: 'bundler', target: 'ES2022' } }),
    );
    writeFileSync(path.join(fixture, 'lib/gateway/other.ts'), 'export function a(_x: unknown) {}\nexport function b(_x: unknown) {}\n');
    writeFileSync(path.join(fixture, 'lib/gateway/third.ts'), 'export function c(_r: unknown) {}\n');
    writeFileSync(
      path.join(fixture, 'lib/gateway/pipeline.ts'),
      [
        "import { a, b } from './other';",
        "import { c } from './third';",
        'export function runPipeline(ctx: { n: number; rec: object }) {',
        '  a(ctx);', // other.ts
        '  helper(ctx);', // back in pipeline.ts: a return; inside it, other.ts again: a return
        '  c(ctx.rec);', // the record: counted only with `rec`
        '  ctx.n.toFixed();', // made on a field of the request: not counted
        '  helper(ctx);', // a stop (a return), not walked again
        '  a(1);', // not handed the request
        '}',
        'function helper(x: { n: number }) {',
        '  b(x);',
        '}',
      ].join('\n'),
    );
    const walk = requestWalk({ root: fixture });
    expect(walk.stops.map((s) => `${s.isReturn ? '↩' : ''}${s.file}:${s.callee}`)).toEqual([
      'lib/gateway/other.ts:a',
      '↩lib/gateway/pipeline.ts:helper',
      '↩lib/gateway/other.ts:b',
      '↩lib/gateway/pipeline.ts:helper',
    ]);
    expect(walk.returns).toBe(3);
    const withRecord = requestWalk({ root: fixture, rec: true });
    expect(withRecord.stops.map((s) => s.file)).toContain('lib/gateway/third.ts');
    expect(withRecord.returns).toBe(3);
  });

  it('returns to a module it left at most half as often as before the rewrite', () => {
    const walk = requestWalk();
    const files = new Set(walk.stops.map((s) => s.file));
    // The walk reaches the request's whole life: it cannot pass by finding nothing.
    expect(walk.stops.length).toBeGreaterThanOrEqual(40);
    for (const f of ['lib/gateway/context.ts', 'lib/gateway/pipeline.ts', 'lib/gateway/answer.ts']) expect(files).toContain(f);
    expect(walk.returns).toBeLessThanOrEqual(BEFORE_THE_REWRITE / 2);
    // The record's writes counted too (decision 058 gives both figures): record.ts is reached.
    const withRecord = requestWalk({ rec: true });
    expect(withRecord.stops.map((s) => s.file)).toContain('lib/gateway/record.ts');
    expect(withRecord.stops.length).toBeGreaterThan(walk.stops.length);
  }, 60_000);
});

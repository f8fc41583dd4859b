// /openapi.json is an OpenAPI 3.1 document of the whole API, made from the routes' schemas
// (lib/schemas): the route list is read from app/ on disk, so a route without a schema fails here.
// Each Schema Object is compiled as JSON Schema 2020-12 (OpenAPI 3.1's dialect) by Ajv, and the
// shapes the schemas give the routes refuse bad input naming the field, in both languages.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020';
import { openApiDocument } from '@/lib/http/openapi';
import { resources } from '@/lib/schemas';
import { fieldErrorsOf, formErrors } from '@/lib/schemas/fields';
import { keys } from '@/lib/schemas/keys';
import { alerts } from '@/lib/schemas/alerts';
import { adminAccounts } from '@/lib/schemas/admin/accounts';
import { renderMessage } from '@/lib/i18n/codes';
import { invalidInput } from '@/lib/http/validate';
import { REGION_PATTERN as gatewayRegion } from '@/lib/region';
import { REGION_PATTERN } from '@/lib/schemas/route';

const root = path.resolve(__dirname, '../..');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

type Json = Record<string, any>;
const doc = openApiDocument() as Json;

/** Every route.ts under app/: its URL path (OpenAPI style), whether it is a catch-all, its methods. */
function routeFiles(dir = path.join(root, 'app'), out: { file: string; path: string; catchAll: boolean; methods: string[] }[] = []) {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) routeFiles(full, out);
    else if (name === 'route.ts') {
      const segments = path
        .relative(path.join(root, 'app'), dir)
        .split(path.sep)
        .filter((s) => s && !/^\(.*\)$/.test(s)); // route groups are not in the URL
      const catchAll = segments.some((s) => s.startsWith('[...'));
      const kept = catchAll
        ? segments.slice(
            0,
            segments.findIndex((s) => s.startsWith('[...')),
          )
        : segments;
      const text = readFileSync(full, 'utf8');
      const methods = METHODS.filter((m) => new RegExp(`export (const|async function|function) ${m}\\b|as ${m}\\b`).test(text));
      out.push({ file: path.relative(root, full), path: '/' + kept.map((s) => s.replace(/^\[(.+)\]$/, '{$1}')).join('/'), catchAll, methods });
    }
  }
  return out;
}

const files = routeFiles();

describe('/openapi.json', () => {
  it('is OpenAPI 3.1 in shape', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(Object.keys(doc.paths).length).toBeGreaterThan(60);
    const ids = new Set<string>();
    for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
      expect(p.startsWith('/'), p).toBe(true);
      for (const [method, op] of Object.entries(item)) {
        expect(['get', 'post', 'put', 'patch', 'delete']).toContain(method);
        expect(ids.has(op.operationId), `operationId ${op.operationId} twice`).toBe(false);
        ids.add(op.operationId);
        expect(Object.keys(op.responses).length, `${method} ${p} responses`).toBeGreaterThan(0);
        for (const status of Object.keys(op.responses)) expect(status).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
        // Every {name} of the path is a required path parameter, and no other is.
        const named = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
        const declared = (op.parameters ?? []).filter((x: Json) => x.in === 'path');
        expect(declared.map((x: Json) => x.name).sort(), `${method} ${p} path parameters`).toEqual(named);
        for (const x of declared) expect(x.required).toBe(true);
        for (const x of op.parameters ?? []) expect(['path', 'query', 'header', 'cookie']).toContain(x.in);
        for (const scheme of op.security ?? []) for (const name of Object.keys(scheme)) expect(doc.components.securitySchemes).toHaveProperty(name);
      }
    }
  });

  it('has Schema Objects that are valid JSON Schema 2020-12 and references that resolve', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const schemas: Json[] = [];
    const visit = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'schema') schemas.push(x as Json);
          else visit(x);
        }
      }
    };
    visit(doc.paths);
    expect(schemas.length).toBeGreaterThan(100);
    ajv.addSchema({ ...doc.components.schemas.ApiError, $id: 'ApiError' });
    for (const s of schemas) {
      const own = JSON.parse(JSON.stringify(s).replaceAll('"#/components/schemas/ApiError"', '"ApiError"')) as Json;
      expect(() => ajv.compile(own), JSON.stringify(s).slice(0, 200)).not.toThrow();
    }
  });

  it('lists every route in app/ (the /v1 surfaces and /api) with each of its methods', () => {
    expect(files.filter((f) => f.path.startsWith('/api/')).length).toBeGreaterThan(50);
    expect(files.filter((f) => f.path.startsWith('/v1')).length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const f of files) {
      if (f.catchAll) {
        // A catch-all (/v1/anthropic/[...path]) serves paths the gateway's table knows: at least one is documented.
        if (!Object.keys(doc.paths).some((p) => p.startsWith(`${f.path}/`))) missing.push(`${f.file}: nothing under ${f.path}/`);
        continue;
      }
      for (const m of f.methods) {
        if (!doc.paths[f.path]?.[m.toLowerCase()]) missing.push(`${m} ${f.path} (${f.file}): declare it in its resource file in lib/schemas`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents no route that app/ does not have', () => {
    const stale: string[] = [];
    for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const method of Object.keys(item)) {
        const served = files.some((f) =>
          f.catchAll
            ? p.startsWith(`${f.path}/`)
            : f.path.replace(/\{\w+\}/g, '{}') === p.replace(/\{\w+\}/g, '{}') && f.methods.includes(method.toUpperCase()),
        );
        if (!served) stale.push(`${method.toUpperCase()} ${p}`);
      }
    }
    expect(stale).toEqual([]);
  });

  it('declares every resource file of lib/schemas in its index', () => {
    const dir = path.join(root, 'lib/schemas');
    const index = readFileSync(path.join(dir, 'index.ts'), 'utf8');
    const resourceFiles = [...readdirSync(dir), ...readdirSync(path.join(dir, 'admin')).map((f) => `admin/${f}`)].filter(
      (f) => f.endsWith('.ts') && !['index.ts', 'route.ts', 'fields.ts'].includes(f),
    );
    for (const f of resourceFiles) expect(index, `lib/schemas/index.ts imports ./${f}`).toContain(`'./${f.replace(/\.ts$/, '')}'`);
    expect(Object.keys(resources).length).toBe(resourceFiles.length);
  });
});

describe('the schemas refuse bad input naming the field', () => {
  it('key form: every bad field in its words, English and Chinese', () => {
    const parsed = keys.create.body.safeParse({ name: '', rpm: 0, budget_usd: 'ten' });
    expect(parsed.success).toBe(false);
    const fields = fieldErrorsOf(keys.create.body, parsed.error!.issues);
    expect(fields.map((f) => [f.field, f.message_code])).toEqual([
      ['name', 'field.name'],
      ['budget_usd', 'field.budget'],
      ['rpm', 'field.rpm'],
    ]);
    const zh = formErrors('zh-CN', keys.create.body, { rpm: 0 })!;
    expect(zh.fields.rpm).toBe(renderMessage('zh-CN', { message_code: 'field.rpm' }));
    expect(zh.fields.rpm).toMatch(/[\u4e00-\u9fff]/);
    expect(zh.text).toBe('请检查下方标出的字段。');
    expect(formErrors('en', keys.create.body, { name: 'ci', rpm: 30, models: ['gpt-4o'] })).toBeNull();
  });

  it("the API's 400: code, param, message_code and every field", () => {
    const parsed = alerts.saveSettings.body.safeParse({ thresholds: [0], webhook_url: 5 });
    const err = invalidInput(alerts.saveSettings.body, parsed.error!.issues);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_request');
    expect(err.param).toBe('thresholds');
    expect(err.messageCode).toBe('field.thresholds');
    expect(err.fields?.map((f) => f.field)).toEqual(['thresholds', 'webhook_url']);
    expect(err.message).toContain('"thresholds"');
  });

  it('generic words name the field where a field has none of its own', () => {
    const parsed = adminAccounts.act.body.safeParse({ action: 'set_tier', tier: 'gold' });
    const err = invalidInput(adminAccounts.act.body, parsed.error!.issues);
    expect(err.param).toBe('tier');
    expect(err.messageCode).toBe('field.one_of');
    expect(err.message).toBe('tier must be one of: free, pro, vip, enterprise.');
    expect(renderMessage('zh-CN', { message_code: err.messageCode, params: err.params })).toBe('“tier”须为以下之一：free, pro, vip, enterprise。');
    const unknown = adminAccounts.act.body.safeParse({ action: 'set_status', status: 'active', extra: 1 });
    // Not strict: an unknown member is ignored, as before the schemas.
    expect(unknown.success).toBe(true);
  });

  it("keeps the schemas' region pattern the gateway's", () => {
    expect(REGION_PATTERN.source).toBe(gatewayRegion.source);
  });
});

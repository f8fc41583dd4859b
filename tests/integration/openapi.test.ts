// The built server serves /openapi.json (OpenAPI 3.1, made from the routes' schemas) and the docs
// page links it; account and operator routes refuse bad input with a 400 in the account API's
// envelope naming the field, with a message code the pages say in the reader's language, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { createAccount, createOperator, signIn } from '../support/accounts';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';
import { renderMessage, type ApiErrorJson } from '@/lib/i18n/codes';

let gw: RunningGateway;
let user: string;
let operator: string;

beforeAll(async () => {
  // No upstream is called: the channel's address only has to parse.
  gw = await startGateway({
    config: testConfig({
      openaiUrls: ['http://127.0.0.1:9'],
      channelPrefix: 'openapi',
      // The per-IP login counter in Redis is shared by every test file running at once.
      overrides: { limits: { login_per_ip_per_minute: 10_000 } },
    }),
  });
  user = await signIn(gw.url, await createAccount());
  operator = await signIn(gw.url, await createOperator());
});

afterAll(async () => {
  await gw?.stop();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

type ErrorBody = Required<ApiErrorJson>['error'] & { param?: string };

async function call(cookie: string, method: string, path: string, body?: unknown, type = 'application/json') {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { cookie, origin: gw.url, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as { error: ErrorBody };
  return { status: res.status, error: json.error };
}

describe('/openapi.json', () => {
  it('is served as an OpenAPI 3.1 document of /v1 and /api, and the docs page links it', async () => {
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.paths['/v1/chat/completions']).toHaveProperty('post');
    expect(doc.paths['/v1/anthropic/v1/messages']).toHaveProperty('post');
    expect(doc.paths['/api/keys']).toHaveProperty('post');
    expect(doc.paths['/api/admin/accounts/{id}']).toHaveProperty('post');
    const docs = await (await fetch(`${gw.url}/docs`)).text();
    expect(docs).toContain('href="/openapi.json"');
  });
});

describe('bad input is a 400 naming the field', () => {
  it('the key form: every bad field in its words', async () => {
    const { status, error } = await call(user, 'POST', '/api/keys', { name: 'ci', rpm: 'many', models: 'gpt-4o' });
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'invalid_request', param: 'rpm', message_code: 'field.rpm' });
    expect(error.fields?.map((f) => f.field)).toEqual(['rpm', 'models']);
    expect(renderMessage('zh-CN', error.fields![0])).toBe('请输入 1 到 1,000,000 之间的每分钟请求数（整数），或留空。');
  });

  it('alert settings, a redemption code, an organization name, a log filter', async () => {
    const alerts = await call(user, 'PUT', '/api/alerts/settings', { thresholds: [150] });
    expect(alerts).toMatchObject({ status: 400, error: { param: 'thresholds', message_code: 'field.thresholds' } });
    const redeem = await call(user, 'POST', '/api/payment/redeem', {});
    expect(redeem).toMatchObject({ status: 400, error: { param: 'code', message_code: 'field.required', params: { field: 'code' } } });
    expect(renderMessage('zh-CN', redeem.error)).toBe('必须填写“code”。');
    const org = await call(user, 'POST', '/api/orgs', { name: 5 });
    expect(org).toMatchObject({ status: 400, error: { param: 'name', message_code: 'org.name_invalid' } });
    const res = await fetch(`${gw.url}/api/logs?limit=${'9'.repeat(20)}`, { headers: { cookie: user } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: ErrorBody }).error).toMatchObject({ param: 'limit', message_code: 'filter.limit' });
  });

  it('an operator action: the field of the chosen action, in generic words when it has none of its own', async () => {
    const account = await createAccount();
    const bad = await call(operator, 'POST', `/api/admin/accounts/${account.userId}`, { action: 'set_tier', tier: 'gold' });
    expect(bad).toMatchObject({
      status: 400,
      error: { param: 'tier', message_code: 'field.one_of', message: 'tier must be one of: free, pro, vip, enterprise.' },
    });
    const level = await call(operator, 'POST', '/api/admin/announcements', { message: 'hello', level: 'loud' });
    expect(level).toMatchObject({ status: 400, error: { param: 'level', message_code: 'field.one_of' } });
    const extra = await call(operator, 'POST', '/api/admin/announcements', { message: 'hello', colour: 'red' });
    expect(extra).toMatchObject({ status: 400, error: { param: 'colour', message_code: 'field.unknown' } });
  });

  it('never a 500: not JSON, not an object, the wrong media type', async () => {
    expect(await call(user, 'POST', '/api/keys', '{"name":')).toMatchObject({ status: 400, error: { code: 'invalid_json' } });
    expect(await call(user, 'POST', '/api/keys', [1, 2])).toMatchObject({
      status: 400,
      error: { code: 'invalid_request', message_code: 'request.not_object' },
    });
    expect(await call(user, 'POST', '/api/keys', 'name=ci', 'application/x-www-form-urlencoded')).toMatchObject({
      status: 415,
      error: { code: 'unsupported_media_type' },
    });
    expect(await call(user, 'POST', '/api/auth/login', { email: 5, password: 'x' })).toMatchObject({ status: 400, error: { param: 'email' } });
  });
});

// Seeded fuzzing of the production gateway (`node dist/server.mjs`): 400 bounded requests to the
// /v1 surfaces and the account endpoints with random and mutated JSON, wrong types, huge strings,
// 10k-deep nesting, invalid UTF-8, very long headers and wrong content types, sent over raw
// node:http (so bytes, headers and content types are exactly what the case says).
//
// Invariants: never a 500 and never a dropped connection; the gateway is alive at the end and never
// logged a handler crash; every /v1 error body is the OpenAI envelope
// {error:{message,type,param,code}}, every /v1/anthropic error body the Anthropic envelope
// {type:"error",error:{type,message}}, every /api error body {error:{code,message}}.
// 431 for a header block over the server's 32 KiB limit comes from node:http itself (no body).
//
// The PRNG seed is fixed: a failure names its case number, and re-running reproduces it.

import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { countTokens, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { getDb } from '@/lib/db';
import { getLimiter } from '@/lib/limits/runtime';

const SEED = 0xc0ffee;
const N = 400;
/** Of the N, this many are fixed edge cases (always sent, valid key and JSON content type); the rest random. */
const TARGETED = 28;

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let gw: RunningGateway;
let fake: FakeUpstream;
let acct: TestAccount;

beforeAll(async () => {
  countTokens('warm up the fake upstream tokenizer');
  fake = await startFakeUpstream();
  gw = await startGateway({ config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url] }) });
  acct = await createAccount({ tier: 'enterprise', balanceUsd: '100' });
});

afterAll(async () => {
  agent.destroy();
  await gw?.stop('SIGKILL');
  await fake?.close();
  await getLimiter().close();
  await (await getDb()).$disconnect();
});

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body with chunked transfer encoding (no content-length), in 64 KiB writes. */
  chunked?: boolean;
}
interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

// Keep-alive, as SDKs and curl connect. (A `Connection: close` client that is still uploading when
// the gateway answers early, e.g. 401 before reading a 5 MB body, gets its socket closed under it
// by node:http: EPIPE instead of the answer. Keep-alive connections have the rest of the body
// read off the wire by node and see the answer.)
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function send(port: number, req: Sent, timeoutMs = 20_000): Promise<Got> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body && !req.chunked) headers['content-length'] = req.body.length;
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    r.on('error', reject);
    if (req.chunked && req.body) {
      for (let i = 0; i < req.body.length; i += 65_536) r.write(req.body.subarray(i, i + 65_536));
      r.end();
    } else r.end(req.body);
  });
}

// ---- case generator ---------------------------------------------------------------------------

type Surface = 'openai' | 'anthropic' | 'api';
interface Case extends Sent {
  n: number;
  surface: Surface;
  note: string;
}

function generator(rand: () => number, apiKey: string) {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => rand() < p;

  const strings = [
    '',
    'hi',
    'ECHO: fuzz',
    'gpt-4o-mini',
    'service-auto',
    'user',
    'assistant',
    'system',
    'tool',
    '\u0000',
    '\ud800',
    '😀'.repeat(20),
    'a'.repeat(5000),
    '<script>alert(1)</script>',
    '{"nested":"json"}',
    'Robert\'); DROP TABLE "User";--',
  ];
  const numbers = [0, -1, 1, 2, 0.5, -0, 1e308, -1e308, 4096, 2 ** 31, 2 ** 53 + 1, 1e-320, 3.14159];
  function value(depth = 0): unknown {
    const k = int(depth > 2 ? 4 : 7);
    if (k === 0) return null;
    if (k === 1) return chance(0.5);
    if (k === 2) return pick(numbers);
    if (k === 3) return pick(strings);
    if (k === 4 || k === 5) return Array.from({ length: int(4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = int(4); i > 0; i--) o[pick(['role', 'content', 'type', 'text', 'name', 'model', 'a', '__proto__', 'constructor'])] = value(depth + 1);
    return o;
  }

  const chatModels = ['gpt-4o-mini', 'gpt-4o', 'deepseek-chat', 'service-auto', 'no-such-model', 'text-embedding-3-small', 'claude-haiku-4-5'];
  const bases: Record<string, () => Record<string, unknown>> = {
    '/v1/chat/completions': () => ({ model: pick(chatModels), messages: [{ role: 'user', content: 'fuzz' }], max_tokens: 16 }),
    '/v1/embeddings': () => ({ model: pick(['text-embedding-3-small', 'bge-m3', 'gpt-4o-mini', 'nope']), input: pick(['fuzz', ['a', 'b']]) }),
    '/v1/models': () => ({}),
    '/v1/anthropic/v1/messages': () => ({
      model: pick(['claude-haiku-4-5', 'claude-sonnet-4-5', 'gpt-4o-mini']),
      max_tokens: 16,
      messages: [{ role: 'user', content: 'fuzz' }],
    }),
    '/api/auth/login': () => ({ email: `fuzz-${int(1000)}@example.com`, password: 'wrong-password-1' }),
    '/api/auth/register': () => ({ email: `fuzz-${int(1e9)}@example.com`, password: 'a-good-password-1' }),
  };
  const fields = [
    'model',
    'messages',
    'input',
    'stream',
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'tools',
    'tool_choice',
    'service',
    'stream_options',
    'response_format',
    'stop',
    'n',
    'encoding_format',
    'dimensions',
    'system',
    'email',
    'password',
    'base_url',
  ];

  function mutate(body: Record<string, unknown>): Record<string, unknown> {
    for (let m = int(4); m > 0; m--) {
      const keys = Object.keys(body);
      const op = int(6);
      if (op === 0 && keys.length) delete body[pick(keys)];
      else if (op === 1) body[pick(fields)] = value();
      else if (op === 2 && keys.length) body[pick(keys)] = value();
      else if (op === 3) body.messages = Array.from({ length: int(3) }, () => (chance(0.5) ? { role: pick(strings), content: value(1) } : value(1)));
      else if (op === 4) body.messages = [{ role: 'user', content: [null, 5, { text: 7 }, { type: 'text', text: 'x' }, 'part', [1]].slice(0, 1 + int(6)) }];
      else if (op === 5) body.stream = chance(0.5) ? true : value();
    }
    return body;
  }

  const deep = (open: string, close: string, inner = '1') => open.repeat(10_000) + inner + close.repeat(10_000);

  return function next(n: number): Case {
    const path = pick(Object.keys(bases));
    const surface: Surface = path.startsWith('/v1/anthropic') ? 'anthropic' : path.startsWith('/v1') ? 'openai' : 'api';
    const headers: Record<string, string> = {};
    let note = '';
    // Authentication: mostly the real key, sometimes wrong in assorted ways.
    const auth = int(10);
    if (auth < 7) {
      if (surface === 'anthropic' && chance(0.5)) headers['x-api-key'] = apiKey;
      else headers.authorization = `Bearer ${apiKey}`;
    } else if (auth === 7) headers.authorization = 'Bearer sk-gw-not-a-real-key';
    else if (auth === 8) headers.authorization = pick(['Basic Zm9vOmJhcg==', 'Bearer', 'bearer  ', `Bearer ${apiKey} extra`, 'x'.repeat(300)]);
    if (surface === 'anthropic' && chance(0.7)) headers['anthropic-version'] = '2023-06-01';
    // Content type.
    const ct = int(20);
    if (ct < 14) headers['content-type'] = 'application/json';
    else if (ct === 14) headers['content-type'] = 'application/json; charset=utf-8';
    else if (ct === 15) headers['content-type'] = 'text/plain';
    else if (ct === 16) headers['content-type'] = 'multipart/form-data; boundary=xyz';
    else if (ct === 17) headers['content-type'] = 'application/x-www-form-urlencoded';
    else if (ct === 18) headers['content-type'] = 'application/vnd.api+json';
    // ct 19: no content type at all
    // A very long header now and then (over node's 32 KiB header limit: 431).
    if (chance(0.02)) {
      headers['x-fuzz-long'] = 'h'.repeat(40_000);
      note += 'long-header ';
    } else if (chance(0.03)) headers['x-fuzz'] = 'h'.repeat(8000);

    let method = 'POST';
    if (path === '/v1/models') method = chance(0.8) ? 'GET' : pick(['POST', 'DELETE', 'PUT']);
    else if (chance(0.05)) method = pick(['GET', 'PUT', 'DELETE', 'PATCH']);

    let body: Buffer | undefined;
    const kind = int(100);
    if (method === 'GET' && chance(0.8)) {
      body = undefined;
      note += 'no-body';
    } else if (kind < 60) {
      body = Buffer.from(JSON.stringify(mutate(bases[path]())));
      note += 'mutated';
    } else if (kind < 68) {
      body = Buffer.from(JSON.stringify(value()));
      note += 'random-json';
    } else if (kind < 74) {
      const text = JSON.stringify(mutate(bases[path]()));
      body = Buffer.from(text.slice(0, int(text.length)));
      note += 'truncated';
    } else if (kind < 80) {
      const base = JSON.stringify(bases[path]());
      const at = base.indexOf('"fuzz"') > 0 ? base.indexOf('"fuzz"') + 1 : int(base.length);
      body = Buffer.concat([
        Buffer.from(base.slice(0, at)),
        Buffer.from(pick([[0xff, 0xfe], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]])),
        Buffer.from(base.slice(at)),
      ]);
      note += 'invalid-utf8';
    } else if (kind < 88) {
      const where = int(6);
      const nest = chance(0.5) ? deep('[', ']') : deep('{"a":', '}');
      const text =
        where === 0
          ? nest
          : where === 1
            ? `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${deep('[', ']', '"x"')}}]}`
            : where === 2
              ? `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"tools":[${nest}]}`
              : where === 3
                ? `{"model":"text-embedding-3-small","input":"x","extra":${nest}}`
                : where === 4
                  ? `{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":${nest}}`
                  : `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"service":${nest}}`;
      body = Buffer.from(text);
      note += `deep-${where}`;
    } else if (kind < 91) {
      // Over the 4 MiB body limit: 413.
      body = Buffer.from(JSON.stringify({ ...bases[path](), input: 'x'.repeat(5 * 1024 * 1024) }));
      note += 'huge-5MB';
    } else if (kind < 93) {
      body = Buffer.from(JSON.stringify({ ...bases[path](), messages: [{ role: 'user', content: 'y '.repeat(600_000) }], input: 'y '.repeat(600_000) }));
      note += 'big-1.2MB';
    } else if (kind < 96) {
      body = Buffer.alloc(0);
      note += 'empty';
    } else {
      body = Buffer.from(Array.from({ length: 1 + int(200) }, () => int(256)));
      note += 'random-bytes';
    }
    return { n, method, path, headers, body, surface, note };
  };
}

/** Edge cases every run sends with a valid key, so they get past authentication and the content-type check. */
function targeted(apiKey: string): Omit<Case, 'n'>[] {
  const json = { 'content-type': 'application/json' };
  const bearer = { ...json, authorization: `Bearer ${apiKey}` };
  const anth = { ...json, 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' };
  const deepArr = (inner: string) => '['.repeat(10_000) + inner + ']'.repeat(10_000);
  const deepObj = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
  const chat = (extra: string) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]${extra}}`;
  const c = (path: string, headers: Record<string, string>, body: string | Buffer, note: string): Omit<Case, 'n'> => ({
    method: 'POST',
    path,
    headers,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    surface: path.startsWith('/v1/anthropic') ? 'anthropic' : path.startsWith('/v1') ? 'openai' : 'api',
    note: `targeted ${note}`,
  });
  const huge = 'x'.repeat(5 * 1024 * 1024);
  return [
    c('/v1/chat/completions', bearer, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${deepArr('"x"')}}]}`, 'deep content'),
    c('/v1/chat/completions', bearer, chat(`,"tools":[${deepArr('1')}]`), 'deep tools'),
    c('/v1/chat/completions', bearer, chat(`,"response_format":${deepObj}`), 'deep response_format'),
    c('/v1/chat/completions', bearer, chat(`,"service":${deepObj}`), 'deep service'),
    c('/v1/chat/completions', bearer, chat(`,"x":${deepObj}`), 'deep unknown field'),
    c('/v1/chat/completions', bearer, deepArr(''), 'deep top-level'),
    c('/v1/chat/completions', bearer, `{"model":"service-auto","messages":[{"role":"user","content":[null,1,{"text":2},["x"]]}]}`, 'service-auto odd parts'),
    c('/v1/chat/completions', bearer, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[null,{"type":"text","text":"x"}]}]}`, 'null part'),
    c(
      '/v1/chat/completions',
      bearer,
      Buffer.concat([Buffer.from(chat('').slice(0, -3)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}]}')]),
      'invalid utf8',
    ),
    c('/v1/chat/completions', bearer, JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: huge }] }), 'huge 5MB'),
    {
      ...c('/v1/chat/completions', bearer, JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: huge }] }), 'huge chunked 5MB'),
      chunked: true,
    },
    { ...c('/v1/embeddings', bearer, JSON.stringify({ model: 'text-embedding-3-small', input: huge }), 'huge chunked embeddings'), chunked: true },
    c(
      '/v1/chat/completions',
      { ...json, authorization: 'Bearer sk-gw-revoked-or-wrong' },
      JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: huge }] }),
      'bad key with a 5MB body',
    ),
    c(
      '/v1/anthropic/v1/messages',
      { ...json, 'x-api-key': 'wrong' },
      JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: huge }] }),
      'bad key with a 5MB body (anthropic)',
    ),
    c('/v1/chat/completions', bearer, chat(',"max_tokens":1e308,"temperature":-0'), 'max_tokens 1e308'),
    c('/v1/chat/completions', bearer, chat(',"stream":true,"stream_options":{"include_usage":"yes"}'), 'stream_options odd'),
    c(
      '/v1/chat/completions',
      bearer,
      '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"__proto__":{"stream":true},"constructor":{"prototype":{"x":1}}}',
      'proto keys',
    ),
    c('/v1/chat/completions', { authorization: `Bearer ${apiKey}` }, chat(''), 'no content type'),
    c('/v1/embeddings', bearer, `{"model":"text-embedding-3-small","input":"x","extra":${deepObj}}`, 'deep embeddings'),
    c('/v1/embeddings', bearer, JSON.stringify({ model: 'text-embedding-3-small', input: huge }), 'huge embeddings'),
    c('/v1/embeddings', bearer, JSON.stringify({ model: 'text-embedding-3-small', input: Array.from({ length: 101 }, () => 'x') }), '101 inputs'),
    c('/v1/embeddings', bearer, JSON.stringify({ model: 'text-embedding-3-small', input: 'x', dimensions: 3 }), 'odd dimensions'),
    c(
      '/v1/anthropic/v1/messages',
      anth,
      `{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"x"}],"metadata":${deepObj}}`,
      'deep anthropic',
    ),
    c(
      '/v1/anthropic/v1/messages',
      anth,
      JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: huge }] }),
      'huge anthropic',
    ),
    c('/v1/anthropic/v1/messages', anth, Buffer.from([0xff, 0x00, 0x7b]), 'garbage anthropic'),
    c('/v1/anthropic/v1/messages', { ...anth, 'content-type': 'text/plain' }, '{}', 'text/plain anthropic'),
    c('/api/auth/login', json, deepObj, 'deep login'),
    c('/api/auth/register', json, Buffer.from([0xc3, 0x28]), 'invalid utf8 register'),
  ];
}

// ---- envelope checks --------------------------------------------------------------------------

function checkEnvelope(c: Case, got: Got): string | null {
  const text = got.body.toString('utf8');
  if (got.status === 431) return null; // node:http itself, before any handler
  if (got.status < 400) return null;
  // Next.js answers a method a route does not export with an empty 405 (framework behaviour).
  if (c.surface === 'api' && got.status === 405 && got.body.length === 0) return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 200)}`;
  }
  const e = (body as { error?: Record<string, unknown> }).error;
  if (c.surface === 'openai') {
    if (!e || typeof e !== 'object') return `no error object: ${text.slice(0, 200)}`;
    if (typeof e.message !== 'string' || typeof e.type !== 'string') return `bad OpenAI envelope: ${text.slice(0, 200)}`;
    if (!('param' in e) || !('code' in e)) return `OpenAI envelope lacks param/code: ${text.slice(0, 200)}`;
    if (!(e.param === null || typeof e.param === 'string') || !(e.code === null || typeof e.code === 'string')) return `bad param/code: ${text.slice(0, 200)}`;
  } else if (c.surface === 'anthropic') {
    if ((body as { type?: unknown }).type !== 'error' || !e || typeof e.type !== 'string' || typeof e.message !== 'string')
      return `bad Anthropic envelope: ${text.slice(0, 200)}`;
  } else {
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string') return `bad /api envelope: ${text.slice(0, 200)}`;
  }
  return null;
}

describe(`fuzz (seed ${SEED.toString(16)}, ${N} requests)`, () => {
  it('never a 500, never a crash, every error in its surface envelope', async () => {
    const next = generator(mulberry32(SEED), acct.apiKey);
    const cases: Case[] = [...Array.from({ length: N - TARGETED }, (_, i) => next(i)), ...targeted(acct.apiKey).map((c, i) => ({ ...c, n: N - TARGETED + i }))];
    expect(cases).toHaveLength(N);
    const problems: string[] = [];
    const statuses = new Map<string, number>();
    // A few at a time: bounded, and still some concurrency.
    let i = 0;
    const worker = async () => {
      while (i < cases.length) {
        const c = cases[i++];
        let got: Got;
        try {
          got = await send(gw.port, c);
        } catch (err) {
          // Over the header limit node:http answers 431 and closes the connection; a body still being
          // sent then meets a reset. Anything else is a dropped connection: a failure.
          const code = (err as NodeJS.ErrnoException).code;
          if (!(c.note.includes('long-header') && (code === 'ECONNRESET' || code === 'EPIPE'))) {
            problems.push(`#${c.n} ${c.method} ${c.path} [${c.note}]: transport error ${(err as Error).message}`);
          }
          continue;
        }
        const key = `${c.surface}:${got.status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (got.status >= 500 && got.status !== 502 && got.status !== 503)
          problems.push(`#${c.n} ${c.method} ${c.path} [${c.note}]: status ${got.status} ${got.body.toString('utf8').slice(0, 200)}`);
        if (c.note.startsWith('targeted bad key')) {
          if (got.status !== 401) problems.push(`#${c.n} [${c.note}]: ${got.status}, not 401`);
        } else if (c.note.startsWith('targeted') && c.surface !== 'api' && got.status === 401) problems.push(`#${c.n} [${c.note}]: the valid key was refused`);
        if (c.note.startsWith('targeted huge') && got.status !== 413) problems.push(`#${c.n} [${c.note}]: ${got.status}, not 413`);
        if (c.note.includes('huge-5MB') && c.path !== '/v1/models' && got.status < 300)
          problems.push(`#${c.n} ${c.path}: a 5 MB body was accepted (${got.status})`);
        const env = checkEnvelope(c, got);
        if (env) problems.push(`#${c.n} ${c.method} ${c.path} [${c.note}] ${got.status}: ${env}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    console.log('fuzz status counts', JSON.stringify(Object.fromEntries([...statuses].sort())));
    expect(problems, problems.join('\n')).toEqual([]);

    // Still alive and healthy, and never crashed.
    const health = await send(gw.port, { method: 'GET', path: '/healthz', headers: {} });
    expect(health.status).toBe(200);
    expect(gw.process.exitCode).toBeNull();
    expect(gw.output()).not.toContain('gateway handler crashed');
    expect(gw.output()).not.toMatch(/uncaught|unhandled/i);
    // And still serves a normal request.
    const ok = await send(gw.port, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still alive?' }] })),
    });
    expect(ok.status).toBe(200);
  }, 90_000);
});

// The Batch API through the built server: a 200-line batch whose first channel fails (every line
// falls back to the second), billed at half the live price, line by line, once; a batch cancelled
// half way (lines billed = lines completed, live traffic of the same account served meanwhile);
// and the official `openai` client's files.create / batches.create / batches.retrieve /
// files.content flow, unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor } from '../support/accounts';
import { FAST_JOBS_ENV } from '../support/video-config';
import { testConfig } from '../support/gateway';
import { getDb } from '@/lib/db';
import { breakdownTotal, parseStoredBreakdown } from '@/lib/pricing/breakdown';
import { usdToPico } from '@/lib/money';

let down: FakeUpstream;
let up: FakeUpstream;
let gw: RunningGateway;

interface Batch {
  id: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
}

const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 16 };
const jsonl = (n: number, url = '/v1/chat/completions', body: object = chatBody) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url, body })).join('\n') + '\n';

async function upload(key: string, content: string, purpose = 'batch'): Promise<Response> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([content], { type: 'application/jsonl' }), 'input.jsonl');
  return fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}

async function submit(key: string, content: string): Promise<Batch> {
  const file = (await (await upload(key, content)).json()) as { id: string };
  const res = await fetch(`${gw.url}/v1/batches`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Batch;
}

const getBatch = async (key: string, id: string) =>
  (await (await fetch(`${gw.url}/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Batch;

const fileText = async (key: string, id: string) => (await fetch(`${gw.url}/v1/files/${id}/content`, { headers: { authorization: `Bearer ${key}` } })).text();

beforeAll(async () => {
  [down, up] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  down.setDefault({ type: 'status', status: 500 });
  gw = await startGateway({ config: testConfig({ openaiUrls: [down.url, up.url], channelPrefix: 'batch' }), env: FAST_JOBS_ENV });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([down?.close(), up?.close()]);
  await (await getDb()).$disconnect();
});

describe('the Batch API', () => {
  it('runs a 200-line batch through the pipeline with fallback, at half price, each line billed and logged once', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    // The live price of the same request, for comparison.
    const live = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody),
    });
    expect(live.status).toBe(200);
    const liveCost = Number(live.headers.get('x-service-cost-usd'));
    await live.arrayBuffer();
    expect(liveCost).toBeGreaterThan(0);
    up.reset();

    const batch = await submit(acct.apiKey, jsonl(200));
    expect(batch).toMatchObject({ status: 'validating', request_counts: { total: 200, completed: 0, failed: 0 } });
    const done = await waitFor(async () => {
      const b = await getBatch(acct.apiKey, batch.id);
      return ['completed', 'failed', 'cancelled', 'expired'].includes(b.status) ? b : null;
    }, 120_000);
    expect(done.status, gw.output().slice(-2000)).toBe('completed');
    expect(done.request_counts).toEqual({ total: 200, completed: 200, failed: 0 });
    expect(done.error_file_id).toBeNull();

    const lines = (await fileText(acct.apiKey, done.output_file_id!))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(200);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(200);
    for (const l of lines) {
      expect(l.response.status_code).toBe(200);
      expect(l.response.body.object).toBe('chat.completion');
      expect(l.error).toBeNull();
    }
    // Served by the second channel after the first failed (fallback), one call per line.
    expect(down.requests.length).toBeGreaterThan(0);
    expect(up.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(200);

    // Each line logged and charged once, at half the live price.
    const db = await getDb();
    const rows = await db.requestLog.findMany({ where: { userId: acct.userId, id: { startsWith: 'batch_req_' } } });
    expect(rows).toHaveLength(200);
    for (const r of rows) expect(Number(r.costUsd) * 2).toBeCloseTo(liveCost, 11);
    // Each row's price breakdown shows the discount, and its lines and adjustments add up to the charge (docs/decisions/043).
    for (const r of rows) {
      const b = parseStoredBreakdown(r.priceBreakdown)!;
      expect(b.a?.map((a) => [a[0], a[1]])).toEqual([['batch_discount', '50']]);
      expect(breakdownTotal(b)).toBe(usdToPico(r.costUsd.toFixed(12)));
    }
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(201);
    const charged = rows.reduce((s, r) => s + Number(r.costUsd), 0) + liveCost;
    expect(Number(await balanceOf(acct.userId))).toBeCloseTo(10 - charged, 9);
  }, 180_000);

  it('a batch cancelled half way: lines in flight finish, no new one starts; billed lines = completed lines; live traffic served meanwhile', async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    up.reset();
    up.setDefault({ type: 'delay', ms: 150 });
    const batch = await submit(acct.apiKey, jsonl(200));
    await waitFor(async () => (await getBatch(acct.apiKey, batch.id)).request_counts.completed >= 40, 60_000);
    // The same account's live request is not held behind the batch (its own concurrency and rates).
    const live = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody),
    });
    expect(live.status).toBe(200);
    await live.arrayBuffer();
    const cancel = await fetch(`${gw.url}/v1/batches/${batch.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${acct.apiKey}` } });
    expect(cancel.status).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(((await cancel.json()) as Batch).status);
    const done = await waitFor(async () => {
      const b = await getBatch(acct.apiKey, batch.id);
      return b.status === 'cancelled' ? b : null;
    }, 60_000);
    const completed = done.request_counts.completed;
    expect(completed).toBeGreaterThanOrEqual(40);
    expect(completed).toBeLessThan(200);
    const lines = (await fileText(acct.apiKey, done.output_file_id!)).trim().split('\n');
    expect(lines).toHaveLength(completed);

    const db = await getDb();
    const billed = await db.requestLog.count({ where: { userId: acct.userId, id: { startsWith: 'batch_req_' }, costUsd: { gt: 0 } } });
    expect(billed).toBe(completed);
    // Ledger: the completed lines and the one live request.
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(completed + 1);
    // Nothing ran upstream beyond what was completed (and the live request).
    expect(up.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(completed + 1);
    up.setDefault({ type: 'ok' });
  }, 180_000);

  it("the official openai client's files.create / batches.create / batches.retrieve / files.content flow works unchanged", async () => {
    const acct = await createAccount({ balanceUsd: '10' });
    const client = new OpenAI({ apiKey: acct.apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const body = { model: 'text-embedding-3-small', input: 'a sentence to embed' };
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(5, '/v1/embeddings', body)), 'embed.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'embed.jsonl', status: 'processed' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h', metadata: { job: 'corpus' } });
    expect(created.metadata).toEqual({ job: 'corpus' });
    const done = await waitFor(async () => {
      const b = await client.batches.retrieve(created.id);
      return b.status === 'completed' ? b : null;
    }, 60_000);
    expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    const text = await (await client.files.content(done.output_file_id!)).text();
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['req-0', 'req-1', 'req-2', 'req-3', 'req-4']);
    expect(lines[0].response.body.data[0].embedding).toHaveLength(1536);
    const list = await client.batches.list();
    expect(list.data.map((b) => b.id)).toContain(created.id);
    expect((await client.files.retrieve(file.id)).id).toBe(file.id);
    expect((await client.files.delete(file.id)).deleted).toBe(true);
  }, 120_000);

  it('refuses bad input with the field named: wrong purpose, a bad line, an unknown file, a bad endpoint', async () => {
    const acct = await createAccount({ balanceUsd: '1' });
    const wrong = await upload(acct.apiKey, jsonl(1), 'assistants');
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { param: string } }).error.param).toBe('purpose');
    const bad = (await (await upload(acct.apiKey, jsonl(2) + '{"custom_id":"x","method":"GET","url":"/v1/chat/completions","body":{}}\n')).json()) as {
      id: string;
    };
    const refuse = async (body: object) => {
      const res = await fetch(`${gw.url}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ completion_window: '24h', endpoint: '/v1/chat/completions', ...body }),
      });
      return { status: res.status, error: ((await res.json()) as { error: { message: string; param: string } }).error };
    };
    expect(await refuse({ input_file_id: bad.id })).toMatchObject({
      status: 400,
      error: { param: 'input_file_id', message: expect.stringContaining('Line 3') },
    });
    expect(await refuse({ input_file_id: 'file-nope' })).toMatchObject({ status: 404, error: { param: 'input_file_id' } });
    expect(await refuse({ input_file_id: bad.id, endpoint: '/v1/images' })).toMatchObject({ status: 400, error: { param: 'endpoint' } });

    // A line the pipeline refuses (an unknown model) goes to the error file with its status and body.
    const mixed =
      JSON.stringify({ custom_id: 'good', method: 'POST', url: '/v1/chat/completions', body: chatBody }) +
      '\n' +
      JSON.stringify({ custom_id: 'bad', method: 'POST', url: '/v1/chat/completions', body: { ...chatBody, model: 'no-such-model' } });
    const batch = await submit(acct.apiKey, mixed);
    const done = await waitFor(async () => {
      const b = await getBatch(acct.apiKey, batch.id);
      return b.status === 'completed' ? b : null;
    }, 30_000);
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const errors = (await fileText(acct.apiKey, done.error_file_id!))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'bad', response: { status_code: 400, body: { error: { param: 'model' } } }, error: null });
    expect(
      (await fileText(acct.apiKey, done.output_file_id!))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).custom_id),
    ).toEqual(['good']);
  }, 60_000);
});

describe('batch file retention', () => {
  it('files past batches.file_retention_days are a 404 in OpenAI’s envelope and deleted by the sweep; inputs and outputs alike', async () => {
    // A retention of 0.0001 day (8.64 s), swept every half second, on a gateway of its own.
    const short = await startGateway({
      config: testConfig({ openaiUrls: [up.url], channelPrefix: 'retain', overrides: { batches: { file_retention_days: 0.0001 } } }),
      env: { ...FAST_JOBS_ENV, JOBS_SWEEP_MS: '500' },
    });
    try {
      const acct = await createAccount({ balanceUsd: '5' });
      const auth = { authorization: `Bearer ${acct.apiKey}` };
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob([jsonl(2)]), 'short.jsonl');
      const uploaded = await fetch(`${short.url}/v1/files`, { method: 'POST', headers: auth, body: form });
      expect(uploaded.status).toBe(200);
      const file = (await uploaded.json()) as { id: string; created_at: number; expires_at: number };
      expect(file.expires_at - file.created_at).toBeGreaterThanOrEqual(8);
      expect(file.expires_at - file.created_at).toBeLessThanOrEqual(9);
      const created = await fetch(`${short.url}/v1/batches`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      const done = await waitFor(async () => {
        const b = (await (await fetch(`${short.url}/v1/batches/${id}`, { headers: auth })).json()) as Batch;
        return b.status === 'completed' ? b : null;
      }, 30_000);
      const output = await fetch(`${short.url}/v1/files/${done.output_file_id}`, { headers: auth });
      expect(output.status).toBe(200);
      expect(((await output.json()) as { expires_at: number }).expires_at).toBeGreaterThan(Date.now() / 1000);

      // Once past their retention: 404 in OpenAI's envelope, gone from the list, and their rows deleted.
      const db = await getDb();
      for (const fid of [file.id, done.output_file_id!]) {
        const gone = await waitFor(async () => {
          const r = await fetch(`${short.url}/v1/files/${fid}/content`, { headers: auth });
          return r.status === 404 ? r : (await r.arrayBuffer(), null);
        }, 20_000);
        const body = (await gone.json()) as { error: { message: string; type: string; param: string | null; code: string } };
        expect(body.error).toMatchObject({ type: 'invalid_request_error', message: `No such File object: ${fid}` });
        expect((await fetch(`${short.url}/v1/files/${fid}`, { headers: auth })).status).toBe(404);
        await waitFor(async () => (await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "StoredFile" WHERE "id" = $1`, fid)).length === 0, 20_000);
      }
      const list = (await (await fetch(`${short.url}/v1/files`, { headers: auth })).json()) as { data: unknown[] };
      expect(list.data).toEqual([]);
      expect(short.output()).toContain('batch files past their retention deleted');
    } finally {
      await short.stop();
    }
  }, 90_000);
});

// OpenAI's video API through the gateway (the built server): a job generated on the fake
// upstream's video API (a few seconds), polled, stored and served with range requests; billed at
// the model's price per second once it completes, refunded when the upstream fails it; the
// model's platform-wide daily cap refused with a 429 naming it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway';
import { fakeVideoBytes, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor } from '../support/accounts';
import { CAPPED_VIDEO_MODEL, FAST_JOBS_ENV, VIDEO_MODEL, videoConfig } from '../support/video-config';
import { getDb } from '@/lib/db';
import OpenAI, { toFile } from 'openai';

let up: FakeUpstream;
let gw: RunningGateway;
let dataDir: string;

interface Video {
  id: string;
  object: string;
  status: string;
  progress: number;
  seconds: string;
  size: string;
  model: string;
  error: { code: string; message: string } | null;
}

const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

async function create(key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}/v1/videos`, { method: 'POST', headers: auth(key), body: JSON.stringify(body) });
}

async function get(key: string, id: string): Promise<Video> {
  const res = await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth(key) });
  expect(res.status).toBe(200);
  return (await res.json()) as Video;
}

/** The upstream's id of a video (what the fake's content is derived from). */
async function upstreamIdOf(id: string): Promise<string> {
  const [row] = await (await getDb()).$queryRawUnsafe<{ upstream: string }[]>(`SELECT "state"->>'upstreamId' AS upstream FROM "Job" WHERE "id" = $1`, id);
  return row.upstream;
}

async function listAll(key: string): Promise<string[]> {
  const res = await fetch(`${gw.url}/v1/videos?limit=100`, { headers: auth(key) });
  return ((await res.json()) as { data: Video[] }).data.map((v) => v.id);
}

beforeAll(async () => {
  up = await startFakeUpstream();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-videos-'));
  // Its own login allowance: the per-IP login counter is in Redis, shared by every test file running at once.
  gw = await startGateway({ config: videoConfig([up.url], { limits: { login_per_ip_per_minute: 10_000 } }), env: { ...FAST_JOBS_ENV, DATA_DIR: dataDir } });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await up?.close();
  rmSync(dataDir, { recursive: true, force: true });
  await (await getDb()).$disconnect();
});

describe('POST /v1/videos', () => {
  it('generates a video as a job: queued, in progress, completed; the file streamed and ranged; billed per second once', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const res = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: '[ms=3000] a cat surfing', seconds: '4', size: '720x1280' });
    expect(res.status, gw.output().slice(-2000)).toBe(200);
    const video = (await res.json()) as Video;
    expect(video).toMatchObject({ object: 'video', model: VIDEO_MODEL, status: 'queued', seconds: '4', size: '720x1280', error: null });
    expect(video.id).toMatch(/^video_/);
    // While it runs, the reservation (4 s at $0.10) is held against the balance, not yet charged.
    const statuses = new Set<string>();
    const done = await waitFor(async () => {
      const v = await get(acct.apiKey, video.id);
      statuses.add(v.status);
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.progress).toBe(100);
    expect(statuses.has('in_progress')).toBe(true);

    const expected = fakeVideoBytes(await upstreamIdOf(video.id));
    const whole = await fetch(`${gw.url}/v1/videos/${video.id}/content`, { headers: auth(acct.apiKey) });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer()).equals(expected)).toBe(true);

    const part = await fetch(`${gw.url}/v1/videos/${video.id}/content`, { headers: { ...auth(acct.apiKey), range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${expected.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(expected.subarray(100, 200))).toBe(true);
    const tail = await fetch(`${gw.url}/v1/videos/${video.id}/content`, { headers: { ...auth(acct.apiKey), range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(expected.subarray(expected.length - 10))).toBe(true);
    const outside = await fetch(`${gw.url}/v1/videos/${video.id}/content`, { headers: { ...auth(acct.apiKey), range: `bytes=${expected.length}-` } });
    expect(outside.status).toBe(416);
    await outside.arrayBuffer();

    // 4 seconds at $0.10: charged once, under the video's id.
    await waitFor(async () => (await balanceOf(acct.userId)) === '9.600000000000', 10_000);
    const db = await getDb();
    const ledger = await db.ledgerEntry.findMany({ where: { userId: acct.userId, kind: 'usage' } });
    expect(ledger.map((l) => [l.reference, l.amountUsd.toFixed(2)])).toEqual([[video.id, '-0.40']]);

    // The dashboard's logs page lists the job with its status and a preview link (English and
    // Chinese); the preview serves the video to the signed-in account, ranged as players ask.
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url },
      body: JSON.stringify({ email: acct.email, password: acct.password }),
    });
    expect(login.status).toBe(200);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const page = await (await fetch(`${gw.url}/dashboard/logs`, { headers: { cookie } })).text();
    expect(page).toContain(video.id);
    expect(page).toContain('Completed');
    expect(page).toContain(`/api/jobs/${video.id}/content`);
    expect(page).toContain('Watch video');
    const zh = await (await fetch(`${gw.url}/dashboard/logs`, { headers: { cookie: `${cookie}; lang=zh-CN` } })).text();
    expect(zh).toContain('观看视频');
    expect(zh).toContain('已完成');
    const preview = await fetch(`${gw.url}/api/jobs/${video.id}/content`, { headers: { cookie, range: 'bytes=0-9' } });
    expect(preview.status).toBe(206);
    expect(Buffer.from(await preview.arrayBuffer()).equals(expected.subarray(0, 10))).toBe(true);
    // The log row explains the charge like any request's: 4 seconds x $0.10 per second = $0.40.
    const detail = (await (await fetch(`${gw.url}/api/logs/${video.id}`, { headers: { cookie } })).json()) as {
      price_breakdown: { lines: unknown[]; calls: { tool: string; calls: number; rate_usd_per_call: string; cost_usd: string }[]; total_usd: string };
    };
    expect(detail.price_breakdown.lines).toEqual([]);
    expect(detail.price_breakdown.calls).toMatchObject([{ tool: 'video_seconds', calls: 4 }]);
    expect(Number(detail.price_breakdown.calls[0]!.rate_usd_per_call)).toBe(0.1);
    expect(Number(detail.price_breakdown.total_usd)).toBe(0.4);
    const detailPage = await (await fetch(`${gw.url}/dashboard/logs/${video.id}`, { headers: { cookie } })).text();
    expect(detailPage).toContain('per second');
    expect(detailPage).toMatch(/data-class="video_seconds"/);
    const stranger = await createAccount({ tier: 'pro' });
    const other = await fetch(`${gw.url}/v1/videos/${video.id}`, { headers: auth(stranger.apiKey) });
    expect(other.status).toBe(404);
    await other.arrayBuffer();

    // The list has it; DELETE removes it and its file.
    const list = (await (await fetch(`${gw.url}/v1/videos?limit=5`, { headers: auth(acct.apiKey) })).json()) as { data: Video[] };
    expect(list.data.map((v) => v.id)).toEqual([video.id]);
    const del = await fetch(`${gw.url}/v1/videos/${video.id}`, { method: 'DELETE', headers: auth(acct.apiKey) });
    expect(await del.json()).toEqual({ id: video.id, object: 'video.deleted', deleted: true });
    expect((await fetch(`${gw.url}/v1/videos/${video.id}`, { headers: auth(acct.apiKey) })).status).toBe(404);
  }, 60_000);

  it('a video the upstream fails ends failed with its reason, and the reservation is refunded (nothing charged)', async () => {
    // $1: the video's reservation ($0.80) leaves too little for another until it is refunded.
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const res = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: '[ms=2000] FAIL_LATER a storm', seconds: 8 });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as Video;
    const done = await waitFor(async () => {
      const v = await get(acct.apiKey, id);
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('video_generation_failed');
    expect(done.error?.message).toContain('failed this video on demand');
    const content = await fetch(`${gw.url}/v1/videos/${id}/content`, { headers: auth(acct.apiKey) });
    expect(content.status).toBe(409);
    await content.arrayBuffer();
    // Logged (status and reason), never charged; and the live balance has the reservation back: a
    // video at the whole balance is admitted again.
    const db = await getDb();
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id } }), 10_000);
    expect(row.errorCode).toBe('video_generation_failed');
    expect(row.costUsd.toFixed(2)).toBe('0.00');
    expect(await balanceOf(acct.userId)).toBe('1.000000000000');
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(0);
    const again = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: 'FAIL_NOW', seconds: 8 });
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  }, 60_000);

  it('a video the upstream refuses at once fails without a charge', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const { id } = (await (await create(acct.apiKey, { model: VIDEO_MODEL, prompt: 'FAIL_NOW', seconds: 4 })).json()) as Video;
    const done = await waitFor(async () => {
      const v = await get(acct.apiKey, id);
      return v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.error?.code).toBe('upstream_rejected');
    expect(await balanceOf(acct.userId)).toBe('10.000000000000');
  }, 60_000);

  it('refuses what it cannot generate: a 400 naming the field, 402 beyond the balance, the platform daily cap as a 429 naming it', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const bad = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: 'x', seconds: 99 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('seconds');
    const chat = await create(acct.apiKey, { model: 'gpt-4o-mini', prompt: 'x' });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as { error: { message: string } }).error.message).toContain('not a video model');
    // 20 s at $0.10 is $2: more than the balance.
    const poor = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: 'x', seconds: 20 });
    expect(poor.status).toBe(402);
    await poor.arrayBuffer();
    const missing = await fetch(`${gw.url}/v1/videos/video_${'0'.repeat(48)}`, { headers: auth(acct.apiKey) });
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();

    // The model's concurrency (3): a video in progress holds one of its slots until it ends.
    const busy = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const running = await Promise.all([0, 1, 2].map(() => create(busy.apiKey, { model: VIDEO_MODEL, prompt: '[ms=2500] rain', seconds: 1 })));
    expect(running.map((r) => r.status)).toEqual([200, 200, 200]);
    const ids = await Promise.all(running.map(async (r) => ((await r.json()) as Video).id));
    const fourth = await create(busy.apiKey, { model: VIDEO_MODEL, prompt: 'rain', seconds: 1 });
    expect(fourth.status).toBe(429);
    expect(((await fourth.json()) as { error: { message: string } }).error.message).toContain(`model ${VIDEO_MODEL}: 3 concurrent requests`);
    await waitFor(async () => (await Promise.all(ids.map((id) => get(busy.apiKey, id)))).every((v) => v.status === 'completed'), 30_000);
    const fifth = await create(busy.apiKey, { model: VIDEO_MODEL, prompt: '[ms=300] rain', seconds: 1 });
    expect(fifth.status).toBe(200);
    const fifthId = ((await fifth.json()) as Video).id;
    await waitFor(async () => (await get(busy.apiKey, fifthId)).status === 'completed', 30_000);

    const rich = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const statuses: number[] = [];
    let message = '';
    for (let i = 0; i < 3; i++) {
      const res = await create(rich.apiKey, { model: CAPPED_VIDEO_MODEL, prompt: '[ms=500] a dog', seconds: 1 });
      statuses.push(res.status);
      const body = (await res.json()) as { error?: { message: string } };
      if (body.error) message = body.error.message;
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(message).toContain(`model ${CAPPED_VIDEO_MODEL}: 2 requests per day across the platform`);
    for (const r of await listAll(rich.apiKey)) await waitFor(async () => (await get(rich.apiKey, r)).status === 'completed', 30_000);
  }, 60_000);

  it("the official openai client's videos.create (multipart, a reference image) / retrieve / downloadContent work unchanged", async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    up.reset();
    const client = new OpenAI({ apiKey: acct.apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    // A 1x1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const created = await client.videos.create({
      model: VIDEO_MODEL as 'sora-2',
      prompt: '[ms=1500] a paper boat',
      seconds: '4',
      size: '720x1280',
      input_reference: await toFile(png, 'boat.png', { type: 'image/png' }),
    });
    expect(created).toMatchObject({ object: 'video', status: 'queued', seconds: '4' });
    const done = await waitFor(async () => {
      const v = await client.videos.retrieve(created.id);
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.status).toBe('completed');
    // The upstream got the image as a file, the fields as multipart.
    const sent = up.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos' && r.body.includes('a paper boat'))!;
    expect(String(sent.headers['content-type'])).toMatch(/^multipart\/form-data/);
    expect(sent.body).toContain('name="input_reference"; filename="reference.png"');
    expect(sent.body).toContain('a paper boat');
    const content = await client.videos.downloadContent(created.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(fakeVideoBytes(await upstreamIdOf(created.id)))).toBe(true);
    // A reference that is not an image is refused, naming the field.
    const bad = await client.videos
      .create({ model: VIDEO_MODEL as 'sora-2', prompt: 'x', input_reference: await toFile(Buffer.from('hello'), 'a.txt', { type: 'text/plain' }) })
      .catch((e: unknown) => e as { status: number; error: { param: string } });
    expect(bad).toMatchObject({ status: 400, error: { param: 'input_reference' } });
  }, 60_000);

  it('the pricing page shows a video model priced per second of video, in English and Chinese', async () => {
    const en = await (await fetch(`${gw.url}/pricing`)).text();
    expect(en).toContain(VIDEO_MODEL);
    expect(en).toContain('$0.10 per second of video');
    const zh = await (await fetch(`${gw.url}/pricing`, { headers: { cookie: 'lang=zh-CN' } })).text();
    expect(zh).toContain('视频每秒 $0.10');
  });

  it('an upstream that fails to start the video is retried with back-off; billed once when it completes', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    up.reset();
    up.queue({ type: 'status', status: 503 }, { type: 'status', status: 503 });
    const { id } = (await (await create(acct.apiKey, { model: VIDEO_MODEL, prompt: '[ms=500] retry me', seconds: 2 })).json()) as Video;
    const done = await waitFor(async () => {
      const v = await get(acct.apiKey, id);
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 30_000);
    expect(done.status, gw.output().slice(-2000)).toBe('completed');
    expect(up.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos' && r.body.includes('retry me'))).toHaveLength(3);
    const [row] = await (await getDb()).$queryRawUnsafe<{ retries: number }[]>(`SELECT "retries" FROM "Job" WHERE "id" = $1`, id);
    expect(row.retries).toBe(2);
    await waitFor(async () => (await balanceOf(acct.userId)) === '9.800000000000', 10_000);
  }, 60_000);

  it('DELETE of a video in progress cancels it: gone from the API, nothing charged', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '1' });
    const { id } = (await (await create(acct.apiKey, { model: VIDEO_MODEL, prompt: '[ms=8000] long take', seconds: 10 })).json()) as Video;
    await waitFor(async () => (await get(acct.apiKey, id)).status === 'in_progress', 20_000);
    const del = await fetch(`${gw.url}/v1/videos/${id}`, { method: 'DELETE', headers: auth(acct.apiKey) });
    expect(await del.json()).toEqual({ id, object: 'video.deleted', deleted: true });
    expect((await fetch(`${gw.url}/v1/videos/${id}`, { headers: auth(acct.apiKey) })).status).toBe(404);
    const db = await getDb();
    const row = await waitFor(() => db.requestLog.findFirst({ where: { id } }), 10_000);
    expect(row.errorCode).toBe('cancelled');
    expect(row.costUsd.toFixed(2)).toBe('0.00');
    expect(await balanceOf(acct.userId)).toBe('1.000000000000');
    // The reservation ($1.00) is back on the live balance: the same video is admitted again.
    const again = await create(acct.apiKey, { model: VIDEO_MODEL, prompt: 'FAIL_NOW', seconds: 10 });
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  }, 60_000);
});

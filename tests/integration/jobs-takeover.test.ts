// The job engine across two built servers on the shared PostgreSQL and Redis: a video job's
// instance is killed (SIGKILL) while the upstream generates it; the other instance takes the job
// over when its heartbeat stops, resumes polling the same upstream video (never creating a second
// one), stores it, and bills it exactly once; the account's webhook gets the completion, signed.
// A video killed between its upstream creation and the saving of its id is created again with the
// same idempotency key: the upstream answers the video it made. A batch killed mid-way: lines recorded are never sent again, and the live (Redis) balance ends
// equal to the database's (a line in flight at the kill, run again, is charged once in both).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { balanceOf, createAccount, waitFor, type TestAccount } from '../support/accounts';
import { FAST_JOBS_ENV, VIDEO_MODEL, videoConfig } from '../support/video-config';
import { Redis } from 'ioredis';
import { pico } from '../support/money';
import { verifyWebhook } from '@/lib/alerts/signing';
import { getDb } from '@/lib/db';
import { balanceKey } from '@/lib/limits/keys';

let up: FakeUpstream;
let gws: RunningGateway[];
let gwConfig: Record<string, unknown>;
let gwEnv: Record<string, string>;
let dataDir: string;
let receiver: http.Server;
let redis: Redis;
let hookBase: string;
const received: { headers: Record<string, string | undefined>; body: string }[] = [];

async function login(gw: RunningGateway, a: TestAccount): Promise<string> {
  const res = await fetch(`${gw.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: gw.url, 'x-forwarded-for': '198.18.7.7' },
    body: JSON.stringify({ email: a.email, password: a.password }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

beforeAll(async () => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  up = await startFakeUpstream();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gw-jobs-'));
  gwConfig = videoConfig([up.url]);
  gwEnv = { ...FAST_JOBS_ENV, DATA_DIR: dataDir, ALERT_WEBHOOK_ALLOW_PRIVATE: '1', TRUST_PROXY: '1' };
  gws = await Promise.all([startGateway({ config: gwConfig, env: gwEnv }), startGateway({ config: gwConfig, env: gwEnv })]);
}, 120_000);

afterAll(async () => {
  await Promise.all(gws.map((g) => g.stop()));
  up.setDefault({ type: 'ok' });
  await up?.close();
  await new Promise((r) => receiver?.close(r));
  rmSync(dataDir, { recursive: true, force: true });
  redis?.disconnect();
  await (await getDb()).$disconnect();
});

describe('job engine under kill -9', () => {
  it('the other instance finishes a job whose instance died mid-job: one upstream video, billed once, webhook signed', async () => {
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    const cookie = await login(gws[0], acct);
    const saved = await fetch(`${gws[0].url}/api/alerts/settings`, {
      method: 'PUT',
      headers: { cookie, origin: gws[0].url, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook_url: `${hookBase}/jobs` }),
    });
    const { secret } = (await saved.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_/);

    const res = await fetch(`${gws[0].url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=6000] a lighthouse at night', seconds: 5 }),
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };

    // Wait until an instance has the job and has created the upstream video, then kill that instance.
    const db = await getDb();
    const owned = await waitFor(async () => {
      const rows = await db.$queryRawUnsafe<{ owner: string | null; state: { upstreamId?: string } }[]>(
        `SELECT "owner", "state" FROM "Job" WHERE "id" = $1`,
        id,
      );
      return rows[0]?.owner && rows[0].state.upstreamId ? rows[0] : null;
    }, 20_000);
    const pid = Number(owned.owner!.split(':')[1]);
    const victim = gws.find((g) => g.process.pid === pid)!;
    const survivor = gws.find((g) => g !== victim)!;
    expect(victim).toBeDefined();
    victim.process.kill('SIGKILL');
    await victim.stop();

    const done = await waitFor(async () => {
      const r = await fetch(`${survivor.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${acct.apiKey}` } });
      const v = (await r.json()) as { status: string };
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 40_000);
    expect(done.status, survivor.output().slice(-3000)).toBe('completed');
    expect(survivor.output()).toContain('job taken over');

    // One upstream video (the survivor polled the one created before the kill), two claims.
    expect(up.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos' && r.body.includes('a lighthouse at night'))).toHaveLength(1);
    const [job] = await db.$queryRawUnsafe<{ claims: number; status: string }[]>(`SELECT "claims", "status" FROM "Job" WHERE "id" = $1`, id);
    expect(job).toEqual({ claims: 2, status: 'succeeded' });
    // Billed once: 5 s at $0.10.
    const ledger = await db.ledgerEntry.findMany({ where: { userId: acct.userId, kind: 'usage' } });
    expect(ledger.map((l) => [l.reference, l.amountUsd.toFixed(2)])).toEqual([[id, '-0.50']]);
    expect(await balanceOf(acct.userId)).toBe('9.500000000000');
    const content = await fetch(`${survivor.url}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${acct.apiKey}` } });
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBe(200 * 1024);

    // The completion webhook, signed with the account's alert secret, in OpenAI's event shape.
    const hook = await waitFor(async () => received.find((r) => r.body.includes(id)), 15_000);
    const event = verifyWebhook(secret, hook.headers, hook.body) as { type: string; data: { id: string } };
    expect(event).toMatchObject({ object: 'event', type: 'video.completed', data: { id } });
  }, 120_000);

  /** Two live instances: the dead one of an earlier test replaced. */
  async function twoLive(): Promise<RunningGateway[]> {
    const live = gws.filter((g) => g.process.exitCode === null && g.process.signalCode === null);
    while (live.length < 2) {
      const g = await startGateway({ config: gwConfig, env: gwEnv });
      gws.push(g);
      live.push(g);
    }
    return live;
  }

  const ownerOf = async (id: string) => {
    const db = await getDb();
    const [row] = await db.$queryRawUnsafe<{ owner: string | null; claims: number; status: string }[]>(
      `SELECT "owner", "claims", "status" FROM "Job" WHERE "id" = $1`,
      id,
    );
    return row;
  };

  it('a batch whose instance is killed mid-way is finished by the other: every line once in the output, each billed once', async () => {
    const live = await twoLive();
    const acct = await createAccount({ balanceUsd: '10' });
    up.reset();
    up.setDefault({ type: 'delay', ms: 200 });
    const auth = { authorization: `Bearer ${acct.apiKey}` };
    const form = new FormData();
    form.append('purpose', 'batch');
    const lines = Array.from({ length: 60 }, (_, i) =>
      JSON.stringify({
        custom_id: `k-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `line ${i} of the killed batch` }] },
      }),
    );
    form.append('file', new Blob([lines.join('\n')]), 'kill.jsonl');
    const file = (await (await fetch(`${live[0].url}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
    const created = await fetch(`${live[0].url}/v1/batches`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    const { id } = (await created.json()) as { id: string };
    const db = await getDb();
    await waitFor(async () => (await db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "BatchLine" WHERE "batchId" = $1`, id))[0].n >= 8n, 30_000);
    const owner = await ownerOf(id);
    const victim = live.find((g) => g.process.pid === Number(owner.owner!.split(':')[1]))!;
    const survivor = live.find((g) => g !== victim)!;
    victim.process.kill('SIGKILL');
    await victim.stop();
    // The lines whose result the dead instance recorded (the takeover waits JOBS_STALE_MS: none is the survivor's yet).
    const recorded = (await db.$queryRawUnsafe<{ line: number }[]>(`SELECT "line" FROM "BatchLine" WHERE "batchId" = $1`, id)).map((r) => r.line);
    expect((await ownerOf(id)).claims).toBe(1);

    const done = await waitFor(async () => {
      const b = (await (await fetch(`${survivor.url}/v1/batches/${id}`, { headers: auth })).json()) as {
        status: string;
        output_file_id: string;
        request_counts: { total: number; completed: number; failed: number };
      };
      return b.status === 'completed' ? b : null;
    }, 60_000);
    expect(done.request_counts).toEqual({ total: 60, completed: 60, failed: 0 });
    expect((await ownerOf(id)).claims).toBe(2);
    const output = (await (await fetch(`${survivor.url}/v1/files/${done.output_file_id}/content`, { headers: auth })).text()).trim().split('\n');
    expect(output).toHaveLength(60);
    expect(new Set(output.map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).size).toBe(60);
    // Each line billed once, whether it ran before the kill, at it (run again) or after.
    expect(await db.requestLog.count({ where: { userId: acct.userId, id: { startsWith: 'batch_req_' }, costUsd: { gt: 0 } } })).toBe(60);
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(60);
    // A line recorded before the kill is never sent again; at most the lines in flight at the kill are.
    const sent = (i: number) => up.requests.filter((r) => r.method === 'POST' && r.body.includes(`line ${i} of the killed batch`)).length;
    for (const i of recorded) expect(sent(i), `line ${i}`).toBe(1);
    const again = Array.from({ length: 60 }, (_, i) => i).filter((i) => sent(i) > 1);
    expect(again.length).toBeLessThanOrEqual(4); // batches.concurrency
    // The live (Redis) balance equals the database's: a line run again is charged once there too.
    // Reservations of the dead instance's lines in flight still held in Redis go back to the balance.
    const key = balanceKey(acct.userId);
    const held = (await redis.zrange(`${key}:res`, 0, -1)).reduce((sum, m) => sum + BigInt(m.split('|')[1]), 0n);
    const liveBalance = BigInt((await redis.get(key))!) + held;
    expect(liveBalance).toBe(pico(await balanceOf(acct.userId)));
    up.setDefault({ type: 'ok' });
  }, 120_000);

  it('a video killed between its upstream creation and the checkpoint of its id is created once upstream (idempotency key)', async () => {
    const live = await twoLive();
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    up.reset();
    const auth = { authorization: `Bearer ${acct.apiKey}` };
    // The fake makes the video at once but answers its creation 3.5 s later: the kill lands in between.
    const res = await fetch(`${live[0].url}/v1/videos`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[create_ms=3500] [ms=1500] a paper boat', seconds: 3 }),
    });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const creations = () => up.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos' && r.body.includes('a paper boat'));
    await waitFor(async () => creations().length === 1, 20_000);
    const db = await getDb();
    const [row] = await db.$queryRawUnsafe<{ owner: string | null; state: { upstreamId?: string; creatingOn?: string } }[]>(
      `SELECT "owner", "state" FROM "Job" WHERE "id" = $1`,
      id,
    );
    expect(row.state.upstreamId).toBeUndefined();
    expect(row.state.creatingOn).toBeDefined();
    const victim = live.find((g) => g.process.pid === Number(row.owner!.split(':')[1]))!;
    const survivor = live.find((g) => g !== victim)!;
    victim.process.kill('SIGKILL');
    await victim.stop();

    const done = await waitFor(async () => {
      const v = (await (await fetch(`${survivor.url}/v1/videos/${id}`, { headers: auth })).json()) as { status: string };
      return v.status === 'completed' || v.status === 'failed' ? v : null;
    }, 40_000);
    expect(done.status, survivor.output().slice(-3000)).toBe('completed');
    // The creation was sent again by the survivor with the same key, and the upstream made one video.
    expect(creations().map((r) => r.headers['idempotency-key'])).toEqual([`gw-${id}`, `gw-${id}`]);
    expect(up.videosCreated().filter((v) => v.prompt.includes('a paper boat'))).toHaveLength(1);
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(1);
    expect(await balanceOf(acct.userId)).toBe('9.700000000000');
  }, 120_000);

  it('SIGTERM hands a running job back to the queue; the other instance finishes it, one upstream video, billed once', async () => {
    const live = await twoLive();
    const acct = await createAccount({ tier: 'pro', balanceUsd: '10' });
    up.reset();
    const res = await fetch(`${live[0].url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VIDEO_MODEL, prompt: '[ms=4000] a quiet harbour', seconds: 2 }),
    });
    const { id } = (await res.json()) as { id: string };
    const db = await getDb();
    const owned = await waitFor(async () => {
      const [row] = await db.$queryRawUnsafe<{ owner: string | null; state: { upstreamId?: string } }[]>(
        `SELECT "owner", "state" FROM "Job" WHERE "id" = $1`,
        id,
      );
      return row?.owner && row.state.upstreamId ? row : null;
    }, 20_000);
    const leaving = live.find((g) => g.process.pid === Number(owned.owner!.split(':')[1]))!;
    const staying = live.find((g) => g !== leaving)!;
    expect(await leaving.stop('SIGTERM')).toBe(0);
    expect(leaving.output()).toContain('jobs handed back to the queue at shutdown');
    const done = await waitFor(async () => {
      const v = (await (await fetch(`${staying.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${acct.apiKey}` } })).json()) as { status: string };
      return v.status === 'completed' ? v : null;
    }, 30_000);
    expect(done.status).toBe('completed');
    expect(up.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos' && r.body.includes('a quiet harbour'))).toHaveLength(1);
    expect(await db.ledgerEntry.count({ where: { userId: acct.userId, kind: 'usage' } })).toBe(1);
    expect(await balanceOf(acct.userId)).toBe('9.800000000000');
  }, 120_000);
});

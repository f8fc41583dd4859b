// Request-log export (issue 45 item 5) against the built server: signed webhook batches of at most
// max_rows rows, a failed delivery retried with the same batch id, the cursor surviving a restart,
// a replay of a time range from the operator API, metadata only; and the streamed CSV/JSONL
// downloads of a range with their totals, for an account and for the operator.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, waitFor, type TestAccount } from '../support/accounts';
import { generateSigningSecret, verifyWebhook } from '@/lib/alerts/signing';
import { getDb } from '@/lib/db';
import { formatPico, usdToPico } from '@/lib/money';

interface Delivery {
  id: string;
  body: { id: string; type: string; replay: boolean; replay_id?: string; count: number; rows: { id: string; account_id: string; cost_usd: string }[] };
  raw: string;
}

const secret = generateSigningSecret();
const PROMPT = 'a prompt the export must never carry 7f3a';
let fake: FakeUpstream;
let gw: RunningGateway;
let receiver: http.Server;
let receiverUrl: string;
const deliveries: Delivery[] = [];
const refused: string[] = [];
let failNext = 0;
let account: TestAccount;
let other: TestAccount;
const requestIds: string[] = [];
let t0: Date;

function config() {
  return testConfig({
    openaiUrls: [fake.url],
    channelPrefix: 'lx-',
    overrides: { log_export: { url: receiverUrl, secret, max_rows: 3, max_seconds: 1, settle_seconds: 0 } },
  });
}

async function chat(key: string) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get('x-request-id')!;
}

const liveIds = () => new Set(deliveries.filter((d) => !d.body.replay).flatMap((d) => d.body.rows.map((r) => r.id)));

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
      if (failNext > 0) {
        failNext--;
        refused.push(headers['webhook-id'] ?? '');
        res.writeHead(500).end('not now');
        return;
      }
      // A receiver verifies as the Standard Webhooks libraries do.
      const body = verifyWebhook(secret, headers, raw) as Delivery['body'];
      deliveries.push({ id: headers['webhook-id']!, body, raw });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  fake = await startFakeUpstream();
  const db = await getDb();
  await db.logExportState.deleteMany({});
  await db.logExportReplay.deleteMany({});
  account = await createAccount({ balanceUsd: '5' });
  other = await createAccount({ balanceUsd: '5' });
  t0 = new Date(Date.now() - 1000);
  gw = await startGateway({ config: config(), env: { TRUST_PROXY: '1' } });
  // The exporter starts its cursor when it first runs: wait for its row before sending traffic.
  await waitFor(async () => (await db.logExportState.findUnique({ where: { id: 'default' } }))?.leaseOwner, 20_000);
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('webhook batches', () => {
  it('delivers every row in signed batches of at most max_rows, retrying a refused batch under the same id', async () => {
    failNext = 1;
    for (let i = 0; i < 7; i++) requestIds.push(await chat(i % 2 ? other.apiKey : account.apiKey));
    await waitFor(async () => requestIds.every((id) => liveIds().has(id)), 30_000);
    expect(refused).toHaveLength(1);
    // The refused batch came again, same id (the receiver de-duplicates on it).
    expect(deliveries.map((d) => d.id)).toContain(refused[0]);
    for (const d of deliveries) {
      expect(d.body.type).toBe('request_log.batch');
      expect(d.body.rows.length).toBeLessThanOrEqual(3);
      expect(d.body.count).toBe(d.body.rows.length);
      expect(d.body.id).toBe(d.id);
      expect(d.raw).not.toContain(PROMPT);
    }
    const row = deliveries.flatMap((d) => d.body.rows).find((r) => r.id === requestIds[0])!;
    expect(row.account_id).toBe(account.userId);
    expect(row.cost_usd).toMatch(/^\d+\.\d+$/);
  });

  it('resumes from the stored cursor after a restart: only the new rows are sent', async () => {
    await gw.stop();
    const before = deliveries.length;
    // The stopped instance's lease would lapse by itself within 15 s; the test does not wait for it.
    await (await getDb()).logExportState.update({ where: { id: 'default' }, data: { leaseUntil: new Date(0) } });
    gw = await startGateway({ config: config(), env: { TRUST_PROXY: '1' } });
    const fresh = [await chat(account.apiKey), await chat(account.apiKey)];
    requestIds.push(...fresh);
    await waitFor(async () => fresh.every((id) => liveIds().has(id)), 30_000);
    const after = deliveries.slice(before).flatMap((d) => d.body.rows.map((r) => r.id));
    expect(after.sort()).toEqual([...fresh].sort());
  });

  it('replays a time range from the operator API as batches marked replay', async () => {
    const db = await getDb();
    await db.user.update({ where: { id: account.userId }, data: { role: 'admin' } });
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.45.5.1' },
      body: JSON.stringify({ email: account.email, password: account.password }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const post = (body: unknown) =>
      fetch(`${gw.url}/api/admin/log-export/replay`, {
        method: 'POST',
        headers: { cookie, origin: gw.url, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ from: '2026-02-30', to: '2026-03-01' })).status).toBe(400);
    expect((await post({ from: new Date().toISOString(), to: t0.toISOString() })).status).toBe(400);
    const res = await post({ from: t0.toISOString(), to: new Date(Date.now() + 1000).toISOString() });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await waitFor(async () => (await db.logExportReplay.findUnique({ where: { id } }))?.status === 'done', 30_000);
    const replayed = deliveries.filter((d) => d.body.replay && d.body.replay_id === id);
    expect(replayed.length).toBeGreaterThanOrEqual(3);
    expect(new Set(replayed.flatMap((d) => d.body.rows.map((r) => r.id)))).toEqual(new Set(requestIds));
    for (const d of replayed) expect(d.body.rows.length).toBeLessThanOrEqual(3);
    // Replay batches have their own ids: a receiver that kept the live ones still takes them.
    expect(replayed.some((d) => liveIds().has(d.body.rows[0].id) && deliveries.some((l) => !l.body.replay && l.id === d.id))).toBe(false);
    const status = (await (await fetch(`${gw.url}/api/admin/log-export`, { headers: { cookie } })).json()) as { rows: number; replays: { status: string }[] };
    expect(status.rows).toBeGreaterThanOrEqual(requestIds.length);
    expect(status.replays[0].status).toBe('done');
    for (const [lang, title] of [
      ['en', 'Log export'],
      ['zh-CN', '日志导出'],
    ]) {
      const page = await fetch(`${gw.url}/admin/log-export`, { headers: { cookie: `${cookie}; lang=${lang}` } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(title);
    }
  });
});

describe('downloads', () => {
  let cookie: string;
  beforeAll(async () => {
    const login = await fetch(`${gw.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.45.5.2' },
      body: JSON.stringify({ email: account.email, password: account.password }),
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0];
  });

  it("an account's range as JSONL and CSV, streamed, totals last", async () => {
    const range = `from=${encodeURIComponent(t0.toISOString())}&to=${encodeURIComponent(new Date(Date.now() + 1000).toISOString())}`;
    const res = await fetch(`${gw.url}/api/logs/export?format=jsonl&${range}`, { headers: { cookie } });
    expect(res.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    expect(res.headers.get('content-disposition')).toMatch(/\.jsonl"$/);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = requestIds.filter((_, i) => i >= 7 || i % 2 === 0);
    expect(
      lines
        .slice(0, -1)
        .map((l) => l.id)
        .sort(),
    ).toEqual([...mine].sort());
    const totals = lines.at(-1)!;
    expect(totals.type).toBe('totals');
    expect(totals.requests).toBe(mine.length);
    const sum = lines.slice(0, -1).reduce((s, l) => s + usdToPico(String(l.cost_usd)), 0n);
    expect(sum).toBeGreaterThan(0n);
    expect(totals.cost_usd).toBe(formatPico(sum));
    const csv = await (await fetch(`${gw.url}/api/logs/export?${range}`, { headers: { cookie } })).text();
    const rows = csv.trim().split('\r\n');
    expect(rows).toHaveLength(mine.length + 2);
    expect(rows.at(-1)).toMatch(new RegExp(`^total,${mine.length} requests,`));
    expect(rows.at(-1)).toContain(`,${totals.cost_usd},`);
    expect((await fetch(`${gw.url}/api/logs/export?format=xml`, { headers: { cookie } })).status).toBe(400);
  });

  it("the operator's export of every account, filtered by account, model and channel", async () => {
    const base = `${gw.url}/api/admin/logs/export?format=jsonl&from=${encodeURIComponent(t0.toISOString())}`;
    const all = (await (await fetch(base, { headers: { cookie } })).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(all.at(-1)).toMatchObject({ type: 'totals', requests: requestIds.length });
    const byAccount = (await (await fetch(`${base}&account=${other.email}&model=gpt-4o-mini&channel=lx-openai-1`, { headers: { cookie } })).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(byAccount.slice(0, -1).every((l) => l.account_id === other.userId && l.channel === 'lx-openai-1')).toBe(true);
    expect(byAccount.at(-1)).toMatchObject({ type: 'totals', requests: 3 });
    const none = (await (await fetch(`${base}&channel=no-such-channel`, { headers: { cookie } })).text()).trim().split('\n');
    expect(none).toHaveLength(1);
    expect(JSON.parse(none[0])).toMatchObject({ type: 'totals', requests: 0, cost_usd: '0' });
  });
});

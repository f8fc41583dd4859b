// Issue 44 item 4 against the built server: every request's price breakdown (token class x rate =
// cost, the tier, each discount) is stored with its log row, returned by GET /api/logs/{id} in USD
// and CNY, and carried by the CSV export, and it adds up to the cost billed, to the pico-dollar:
// cache writes and reads (Anthropic), thoughts billed as output (Gemini), a response-cache hit
// billed at the operator's fraction (docs/decisions/043).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { CACHE_TOKENS, GEMINI_THOUGHT, countTokens, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, signIn, waitFor, type TestAccount } from '../support/accounts';
import { usdToCny, usdToPico } from '@/lib/money';
import { parseCsv } from '@/lib/admin/reconcile';

let gw: RunningGateway;
let fake: FakeUpstream;
let account: TestAccount;
let cookie: string;
const RATE_NANO = 7_200_000_000n; // the fixture config's usd_to_cny: 7.2

beforeAll(async () => {
  fake = await startFakeUpstream();
  const config = testConfig({
    openaiUrls: [fake.url],
    anthropicUrls: [fake.url],
    geminiUrls: [fake.url],
    overrides: { response_cache: { billed_fraction: '0.25' } },
  });
  gw = await startGateway({ config });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
  cookie = await signIn(gw.url, account);
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
});

interface Line {
  class: string;
  tokens: number;
  rate_usd_per_million: string;
  rate_cny_per_million: string;
  cost_usd: string;
  cost_cny: string;
}
interface Detail {
  id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: string;
  cost_cny: string;
  price_breakdown: {
    tier: string;
    lines: Line[];
    calls: { cost_usd: string }[];
    adjustments: { kind: string; detail: string; amount_usd: string; amount_cny: string }[];
    unpriced: string[];
    total_usd: string;
    total_cny: string;
  } | null;
}

const pico = usdToPico;

/** The request's log detail, once the batched writer has stored it. */
async function detail(id: string): Promise<Detail> {
  return waitFor(async () => {
    const res = await fetch(`${gw.url}/api/logs/${id}`, { headers: { cookie } });
    return res.status === 200 ? ((await res.json()) as Detail) : null;
  }, 15_000);
}

/** What holds for every breakdown: each line is tokens x rate exactly, and everything sums to the billed cost, in USD and CNY. */
function expectExplains(d: Detail, billedHeader: string): NonNullable<Detail['price_breakdown']> {
  const b = d.price_breakdown;
  expect(b, `no breakdown for ${d.id}`).not.toBeNull();
  for (const l of b!.lines) {
    expect(pico(l.cost_usd), `${l.class}: tokens x rate`).toBe((BigInt(l.tokens) * pico(l.rate_usd_per_million)) / 1_000_000n);
    expect(pico(l.cost_cny), `${l.class} in CNY`).toBe(usdToCny(pico(l.cost_usd), RATE_NANO));
  }
  const sum =
    b!.lines.reduce((a, l) => a + pico(l.cost_usd), 0n) +
    b!.calls.reduce((a, c) => a + pico(c.cost_usd), 0n) +
    b!.adjustments.reduce((a, x) => a + pico(x.amount_usd), 0n);
  expect(sum).toBe(pico(d.cost_usd));
  expect(pico(d.cost_usd)).toBe(pico(billedHeader));
  expect(b!.total_usd).toBe(d.cost_usd);
  expect(b!.total_cny).toBe(d.cost_cny);
  // The lines count the tokens the log row counts.
  const tokens = (...classes: string[]) => b!.lines.filter((l) => classes.includes(l.class)).reduce((a, l) => a + l.tokens, 0);
  expect(tokens('input')).toBe(d.prompt_tokens);
  expect(tokens('output', 'reasoning')).toBe(d.completion_tokens);
  expect(tokens('cache_read')).toBe(d.cache_read_tokens);
  expect(tokens('cache_write_5m', 'cache_write_1h')).toBe(d.cache_write_tokens);
  expect(b!.unpriced).toEqual([]);
  return b!;
}

const lineOf = (b: NonNullable<Detail['price_breakdown']>, cls: string) => b.lines.find((l) => l.class === cls);

function anthropic(system: string) {
  return fetch(`${gw.url}/v1/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': account.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Summarise the manual.' }],
    }),
  });
}

const billed: { id: string; cost: string }[] = [];

describe('price breakdown per request', () => {
  it('cache writes, then cache reads (Anthropic): each class at its own rate, summing exactly to the cost billed', async () => {
    const system = `You are the manual ${randomBytes(6).toString('hex')}. `.repeat(20);
    const write = await anthropic(system);
    expect(write.status).toBe(200);
    const read = await anthropic(system);
    expect(read.status).toBe(200);

    const w = await detail(write.headers.get('x-request-id')!);
    const wb = expectExplains(w, write.headers.get('x-service-cost-usd')!);
    // claude-sonnet-4-5 in the fixtures: input $3/M, output $15/M, cache read $0.30/M, cache write $3.75/M.
    expect(lineOf(wb, 'cache_write_5m')).toMatchObject({
      tokens: CACHE_TOKENS,
      rate_usd_per_million: '3.75',
      rate_cny_per_million: '27',
      cost_usd: '0.000375',
    });
    expect(lineOf(wb, 'input')).toMatchObject({ rate_usd_per_million: '3' });
    expect(lineOf(wb, 'cache_read')).toBeUndefined();
    expect(wb.tier).toBe('base');
    expect(wb.adjustments).toEqual([]);

    const r = await detail(read.headers.get('x-request-id')!);
    const rb = expectExplains(r, read.headers.get('x-service-cost-usd')!);
    expect(lineOf(rb, 'cache_read')).toMatchObject({ tokens: CACHE_TOKENS, rate_usd_per_million: '0.3', cost_usd: '0.00003', cost_cny: '0.000216' });
    expect(lineOf(rb, 'cache_write_5m')).toBeUndefined();
    billed.push({ id: w.id, cost: w.cost_usd }, { id: r.id, cost: r.cost_usd });
  });

  it('thinking (Gemini): the thought tokens are priced in the completion, summing exactly to the cost billed', async () => {
    const res = await fetch(`${gw.url}/v1/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': account.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'Think, then answer.' }] }],
        generationConfig: { thinkingConfig: { thinkingBudget: 512 } },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usageMetadata: { thoughtsTokenCount: number; candidatesTokenCount: number } };
    expect(body.usageMetadata.thoughtsTokenCount).toBe(countTokens(GEMINI_THOUGHT));
    const d = await detail(res.headers.get('x-request-id')!);
    const b = expectExplains(d, res.headers.get('x-service-cost-usd')!);
    // The completion priced is the answer and the thoughts ($2.50/M, the output price, unless a reasoning price is set).
    expect(d.completion_tokens).toBe(body.usageMetadata.candidatesTokenCount + body.usageMetadata.thoughtsTokenCount);
    for (const l of b.lines.filter((x) => x.class === 'output' || x.class === 'reasoning')) expect(l.rate_usd_per_million).toBe('2.5');
    billed.push({ id: d.id, cost: d.cost_usd });
  });

  it('a response-cache hit shows the full price and the discount to the fraction billed', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `cache me ${randomBytes(6).toString('hex')}` }] });
    const call = () =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json', 'x-service-cache': 'ttl=60' },
        body,
      });
    const miss = await call();
    expect(miss.headers.get('x-service-cache')).toBe('miss');
    const hit = await call();
    expect(hit.headers.get('x-service-cache')).toBe('hit');
    const m = await detail(miss.headers.get('x-request-id')!);
    expectExplains(m, miss.headers.get('x-service-cost-usd')!);
    const h = await detail(hit.headers.get('x-request-id')!);
    const b = expectExplains(h, hit.headers.get('x-service-cost-usd')!);
    const full = b.lines.reduce((a, l) => a + pico(l.cost_usd), 0n);
    expect(full).toBe(pico(m.cost_usd)); // the lines price the cached reply as the miss paid for it
    expect(b.adjustments.map((a) => [a.kind, a.detail])).toEqual([['response_cache', '0.25']]);
    expect(pico(h.cost_usd)).toBe((full * 250_000_000n) / 1_000_000_000n);
    billed.push({ id: m.id, cost: m.cost_usd }, { id: h.id, cost: h.cost_usd });
  });

  it('the CSV export carries the breakdown: per-class cost columns and adjustments that add up to cost_usd on every row', async () => {
    expect(billed).toHaveLength(5);
    const csv = await (await fetch(`${gw.url}/api/logs/export`, { headers: { cookie } })).text();
    const [header, ...rows] = parseCsv(csv);
    const col = (name: string) => {
      const i = header.indexOf(name);
      expect(i, name).toBeGreaterThanOrEqual(0);
      return i;
    };
    const moneyColumns = header.filter((h) => h.endsWith('_cost_usd') || h === 'adjustments_usd');
    expect(moneyColumns).toEqual(
      expect.arrayContaining(['input_cost_usd', 'output_cost_usd', 'cache_read_cost_usd', 'cache_write_5m_cost_usd', 'reasoning_cost_usd', 'tools_cost_usd']),
    );
    for (const { id, cost } of billed) {
      const row = rows.find((r) => r[col('id')] === id);
      expect(row, id).toBeDefined();
      const d = await detail(id);
      expect(row![col('cost_usd')]).toBe(cost);
      expect(row![col('price_tier')]).toBe('base');
      // Each class's column is its line's cost; the money columns add up to the row's cost.
      for (const l of d.price_breakdown!.lines) expect(row![col(`${l.class}_cost_usd`)], `${id} ${l.class}`).toBe(l.cost_usd);
      expect(moneyColumns.reduce((a, c) => a + pico(row![col(c)]), 0n)).toBe(pico(cost));
      const adj = d.price_breakdown!.adjustments.reduce((a, x) => a + pico(x.amount_usd), 0n);
      expect(pico(row![col('adjustments_usd')])).toBe(adj);
      if (adj !== 0n) expect(row![col('adjustments')]).toMatch(/^response_cache 0\.25: -/);
    }
    // The totals row sums each class column.
    const totals = rows.find((r) => r[0] === 'total')!;
    const sumOf = (c: string) => rows.filter((r) => r[0] !== 'total').reduce((a, r) => a + pico(r[col(c)] || '0'), 0n);
    for (const c of moneyColumns) expect(pico(totals[col(c)] || '0'), c).toBe(sumOf(c));
  });
});

// The billing conformance suite (issue 44 item 3): every golden fixture of tests/fixtures/billing/
// (one recorded upstream reply per protocol and usage shape, with its exact cost in pico-dollars)
// is replayed by a fake upstream through every client surface that can ask for it, stream or
// whole, on both server paths, and the cost must be exactly the fixture's in the header (a stream's
// trailer; `next start` cannot send trailers), in the body where the protocol shows a cost, in the
// request log row and in the ledger.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBothModes, type GatewayMode, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type Fault, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { expectBooked } from '../support/booking';
import { pico } from '../support/money';
import { billingConfig, billingFixtures, maxOutputOf, surfacesOf, upstreamBody, type BillingFixture, type ClientSurface } from '../support/billing-fixtures';
import { sseEvents } from '../support/sse-fixtures';
import { formatPico } from '@/lib/money';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

let fake: FakeUpstream;
let gateways = {} as Record<GatewayMode, RunningGateway>;
let account: TestAccount;
/** The reply the fake sends next, whatever it is asked. */
let replay: Fault | undefined;

beforeAll(async () => {
  fake = await startFakeUpstream({ faultFor: () => replay });
  gateways = await startBothModes(billingConfig(fake.url));
  account = await createAccount({ tier: 'pro', balanceUsd: '100' });
});

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.stop()));
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  body: string;
}

/** A POST read to its end, trailers included (fetch does not show them). */
function post(gateway: RunningGateway, path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The client's request on `surface` for the fixture's model, with what the fixture adds. */
function ask(gateway: RunningGateway, surface: ClientSurface, f: BillingFixture, extra: Record<string, unknown>): Promise<Answer> {
  const auth = { authorization: `Bearer ${account.apiKey}` };
  switch (surface) {
    case 'openai':
      return post(
        gateway,
        '/v1/chat/completions',
        {
          model: f.model,
          messages: [{ role: 'user', content: 'Hi' }],
          stream: f.stream,
          ...(f.stream ? { stream_options: { include_usage: true } } : {}),
          ...extra,
        },
        auth,
      );
    case 'responses':
      return post(gateway, '/v1/responses', { model: f.model, input: 'Hi', stream: f.stream, store: false, ...extra }, auth);
    case 'anthropic':
      return post(
        gateway,
        '/v1/anthropic/v1/messages',
        { model: f.model, max_tokens: maxOutputOf(f.model), messages: [{ role: 'user', content: 'Hi' }], stream: f.stream, ...extra },
        { ...auth, 'anthropic-version': '2023-06-01' },
      );
    case 'gemini':
      return post(
        gateway,
        `/v1/gemini/v1beta/models/${f.model}:${f.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], ...extra },
        { 'x-goog-api-key': account.apiKey },
      );
  }
}

/** The cost a body states (OpenAI's `service.cost_usd`, a stream's usage chunk, a Response's `service`): its last one, as written. */
function bodyCost(body: string): string | undefined {
  return [...body.matchAll(/"cost_usd":(\d+(?:\.\d+)?)/g)].at(-1)?.[1];
}

type Json = Record<string, unknown>;

/**
 * The usage object the client got, in its protocol: a reply's `usage` (Gemini's `usageMetadata`);
 * of a stream, the usage chunk (OpenAI), the completed Response, Anthropic's message_start usage
 * updated by message_delta's, Gemini's last usageMetadata.
 */
function clientUsageOf(surface: ClientSurface, answer: Answer, stream: boolean): Json | undefined {
  const key = surface === 'gemini' ? 'usageMetadata' : 'usage';
  if (!stream) return (JSON.parse(answer.body) as Json)[key] as Json;
  let usage: Json | undefined;
  for (const ev of sseEvents(answer.body)) {
    if (ev.data === '[DONE]') continue;
    const data = JSON.parse(ev.data) as Json;
    if (surface === 'responses') {
      if (data.type === 'response.completed') usage = (data.response as Json).usage as Json;
    } else if (surface === 'anthropic') {
      const u = data.type === 'message_start' ? (data.message as Json).usage : data.type === 'message_delta' ? data.usage : undefined;
      if (u) usage = { ...usage, ...(u as Json) };
    } else if (data[key]) usage = data[key] as Json;
  }
  return usage;
}

const fixtures = billingFixtures();

describe('billing conformance: every fixture through every surface', () => {
  it('has a fixture for each upstream protocol and usage shape', () => {
    expect(new Set(fixtures.map((f) => f.upstream))).toEqual(new Set(['openai', 'responses', 'anthropic', 'gemini']));
    expect(fixtures.filter((f) => f.cut_after_events !== undefined).length).toBeGreaterThanOrEqual(2);
  });

  describe.each(fixtures.flatMap((f) => (['lean', 'next'] as const).map((mode) => [f.name, mode, f] as const)))('%s (%s)', (_name, mode, f) => {
    it.each(surfacesOf(f))(`bills exactly ${f.cost_pico_usd} pico-USD on the %s surface: header = body = log = ledger`, async (surface, extra) => {
      // A cut comes a while after the last event: before the gateway relayed anything it would be a
      // failure before the first byte (a 502), not a stream cut mid-way.
      replay = { type: 'replay', body: upstreamBody(f), stream: f.stream, cutAfterEvents: f.cut_after_events, cutDelayMs: 1500 };
      const answer = await ask(gateways[mode], surface, f, extra);
      expect(answer.status, answer.body).toBe(200);
      const expected = BigInt(f.cost_pico_usd);
      const unpriced = f.unpriced ? f.unpriced.join(', ') : null;

      // The header; a stream's cost follows as a trailer (its header says "pending"), but for `next start`'s Web Response.
      if (f.stream) expect(answer.headers['x-service-cost-usd']).toBe('pending');
      const costs = !f.stream ? answer.headers : mode === 'lean' ? answer.trailers : undefined;
      if (costs) {
        expect(pico(costs['x-service-cost-usd'] as string)).toBe(expected);
        expect(costs['x-service-unpriced'] ?? null).toBe(unpriced);
      }

      // The body, where the protocol carries a cost (OpenAI chat and Responses; not a stream cut before its end).
      if ((surface === 'openai' || surface === 'responses') && f.cut_after_events === undefined) expect(pico(bodyCost(answer.body)!)).toBe(expected);
      if (f.cut_after_events !== undefined) expect(answer.body).toMatch(/error/);

      // Every usage class the upstream reported, in the client's own usage fields.
      const shown = f.client_usage?.[surface];
      if (shown) expect(clientUsageOf(surface, answer, f.stream)).toMatchObject(shown);

      // The log row and the ledger.
      const row = await expectBooked(answer.headers['x-request-id'] as string, formatPico(expected), { tokens: false });
      expect({ prompt: row.promptTokens, completion: row.completionTokens, cache_read: row.cacheReadTokens, cache_write: row.cacheWriteTokens }).toEqual(f.log);
      const served = (row.attempts as { billing?: { unpriced?: string[] } }[]).at(-1);
      expect(served?.billing?.unpriced ?? null).toEqual(f.unpriced ?? null);
    });
  });
});

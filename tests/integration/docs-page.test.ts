// The public /docs page covers every surface (OpenAI chat, Responses, Anthropic Messages, Gemini,
// embeddings), in English and in Chinese: each section shows its base URL on this server's origin
// and SDK examples (openai for Python and Node, the Anthropic SDKs, google-genai and @google/genai,
// curl). The curl examples are run as printed, the key filled in, against the built server: each
// is answered 200 by the surface it documents and booked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../support/gateway';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { createAccount, type TestAccount } from '../support/accounts';
import { expectBooked } from '../support/booking';
import { getDb } from '@/lib/db';
import { closeEvents } from '@/lib/events';
import { getLimiter } from '@/lib/limits/runtime';

let fake: FakeUpstream;
let gw: RunningGateway;
let account: TestAccount;

beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway({
    config: testConfig({ openaiUrls: [fake.url], anthropicUrls: [fake.url], geminiUrls: [fake.url], channelPrefix: 'docs' }),
    env: { PUBLIC_BASE_URL: '' },
  });
  account = await createAccount({ tier: 'pro', balanceUsd: '5' });
});

afterAll(async () => {
  await gw?.stop();
  await fake?.close();
  await getLimiter().close();
  await closeEvents();
  await (await getDb()).$disconnect();
});

/** The text of some HTML as a reader sees it (tags out, entities decoded). */
function text(html: string): string {
  return html
    .replace(/<!-- -->/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#123;/g, '{')
    .replace(/&#125;/g, '}')
    .replace(/&amp;/g, '&');
}

/** The page's section `id`: its text, and its code blocks by label. */
function section(html: string, id: string): { text: string; code: Map<string, string> } {
  const start = html.indexOf(`<section id="${id}"`);
  expect(start, `section #${id}`).toBeGreaterThanOrEqual(0);
  const body = html.slice(start, html.indexOf('</section>', start));
  const code = new Map<string, string>();
  // CodeBlock: a label span, then <pre ...><code>…</code></pre>.
  for (const m of body.matchAll(/<span[^>]*>([^<]+)<\/span>(?:(?!<section)[\s\S])*?<code>([\s\S]*?)<\/code><\/pre>/g)) code.set(text(m[1]!), text(m[2]!));
  return { text: text(body).replace(/\s+/g, ' '), code };
}

async function docs(lang: 'en' | 'zh-CN'): Promise<string> {
  const res = await fetch(`${gw.url}/docs`, { headers: { cookie: `lang=${lang}`, 'accept-language': lang } });
  expect(res.status).toBe(200);
  return res.text();
}

/** Runs a curl command line of the page (`curl URL -H "k: v"... -d '{...}'`) with fetch. */
async function runCurl(command: string): Promise<Response> {
  const line = command.replace(/\\\n\s*/g, ' ').replaceAll('$GATEWAY_API_KEY', account.apiKey);
  const url = /^curl "?([^"\s]+)"?/.exec(line)![1]!;
  const headers = Object.fromEntries([...line.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
  const body = /-d '([^']+)'/.exec(line)?.[1];
  return fetch(url, { method: body === undefined ? 'GET' : 'POST', headers, body });
}

const SURFACES = [
  {
    id: 'quickstart',
    base: '/v1',
    examples: { curl: '/v1/chat/completions', 'Python (openai)': 'client.chat.completions.create(', 'JavaScript (openai)': 'client.chat.completions.create(' },
    endpoint: '/v1/chat/completions',
  },
  {
    id: 'responses',
    base: '/v1',
    examples: { curl: '/v1/responses', 'Python (openai)': 'client.responses.create(', 'JavaScript (openai)': 'client.responses.create(' },
    endpoint: '/v1/responses',
  },
  {
    id: 'anthropic',
    base: '/v1/anthropic',
    examples: {
      curl: '/v1/anthropic/v1/messages',
      'Python (anthropic)': 'from anthropic import Anthropic',
      'JavaScript (@anthropic-ai/sdk)': "import Anthropic from '@anthropic-ai/sdk'",
    },
    endpoint: '/v1/anthropic/v1/messages',
  },
  {
    id: 'gemini',
    base: '/v1/gemini',
    examples: {
      curl: '/v1/gemini/v1beta/models/gemini-2.5-flash:generateContent',
      'Python (google-genai)': 'from google import genai',
      'JavaScript (@google/genai)': "import { GoogleGenAI } from '@google/genai'",
    },
    endpoint: '/v1/gemini/v1beta/models/{model}:generateContent',
  },
  {
    id: 'embeddings',
    base: '/v1',
    examples: { curl: '/v1/embeddings', 'Python (openai)': 'client.embeddings.create(', 'JavaScript (openai)': 'client.embeddings.create(' },
    endpoint: '/v1/embeddings',
  },
] as const;

describe.each(['en', 'zh-CN'] as const)('/docs (%s)', (lang) => {
  let html: string;
  beforeAll(async () => {
    html = await docs(lang);
  });

  it('says it in the reader’s language', () => {
    expect(text(html)).toContain(lang === 'en' ? 'API documentation' : 'API 文档');
    expect(section(html, 'gemini').text).toMatch(lang === 'en' ? /The key goes in/ : /密钥放在/);
  });

  it('the table of APIs names each base URL on this origin and links its section', () => {
    const table = section(html, 'surfaces');
    for (const s of SURFACES) {
      const cell = new RegExp(`data-testid="base-url-${s.id}"[^>]*>${(gw.url + s.base).replace(/[.:/]/g, '\\$&')}<`);
      expect(html, s.id).toMatch(cell);
      expect(html).toContain(`href="#${s.id}"`);
    }
    expect(table.text).toContain('Claude Code');
    expect(table.text).toContain('Gemini CLI');
  });

  it.each(SURFACES)('$id: its base URL and an example in each SDK, on this origin', ({ id, base, examples }) => {
    const s = section(html, id);
    expect(s.text).toContain(`${gw.url}${base}`);
    expect([...s.code.keys()].sort()).toEqual(Object.keys(examples).sort());
    for (const [label, call] of Object.entries(examples)) {
      const code = s.code.get(label)!;
      expect(code, `${id} ${label}`).toContain(call);
      // Every example points at this server (curl at the endpoint, the SDKs at the base URL), with the key from the environment.
      expect(code, `${id} ${label}`).toContain(label === 'curl' ? `${gw.url}${call}` : `${gw.url}${base}`);
      expect(code, `${id} ${label}`).toContain('GATEWAY_API_KEY');
    }
  });
});

describe('the curl examples work as printed', () => {
  it.each(SURFACES)('$id: 200 from its surface, booked', async ({ id, endpoint }) => {
    const curl = section(await docs('en'), id).code.get('curl')!;
    const res = await runCurl(curl);
    const body = await res.text();
    expect(res.status, body).toBe(200);
    const reply = JSON.parse(body) as Record<string, unknown>;
    if (id === 'embeddings') expect((reply.data as unknown[]).length).toBe(2);
    else expect(body).toContain('Hello from the fake upstream.');
    await expectBooked(res.headers.get('x-request-id'), res.headers.get('x-service-cost-usd')!, { endpoint, tokens: id !== 'embeddings' });
  });
});

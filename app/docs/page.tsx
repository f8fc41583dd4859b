import { currentLocale, serverT } from '@/lib/i18n/server';
import type { Phrase } from '@/lib/i18n/translate';
import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { getConfig } from '@/lib/config';
import { publicOrigin } from '@/lib/http/origin';
import { formatCount } from '@/lib/format';
import { CodeBlock } from '@/components/ui/code-block';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { PublicShell } from '@/components/site/public-shell';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('API docs')} · Model Gateway`, description: t('Endpoints, authentication, errors, limits and cost headers of the gateway API.') };
}

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section id={id} aria-labelledby={`${id}-title`} className="scroll-mt-6 border-t border-slate-100 pt-8">
      <h2 id={`${id}-title`} className="text-xl font-semibold tracking-tight text-slate-900">
        {title}
      </h2>
      <div className="mt-3 space-y-4 text-sm leading-relaxed text-slate-700">{children}</div>
    </section>
  );
}

/** A two-column table: a term in code type (a header, a status) and what it means. */
function TermTable({ rows, nowrap = false }: { rows: [string, ReactNode][]; nowrap?: boolean }) {
  return (
    <div className="overflow-hidden rounded-lg border border-slate-200">
      <Table>
        <TBody>
          {rows.map(([term, what]) => (
            <Tr key={term}>
              <Td className={nowrap ? 'whitespace-nowrap font-mono text-[13px] text-slate-900' : 'font-mono text-[13px] text-slate-900'}>{term}</Td>
              <Td>{what}</Td>
            </Tr>
          ))}
        </TBody>
      </Table>
    </div>
  );
}

// Long paths and URLs wrap anywhere rather than widen the page on a phone.
const C = ({ children }: { children: ReactNode }) => (
  <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[13px] [overflow-wrap:anywhere] text-slate-900">{children}</code>
);

const toc: readonly (readonly [string, Phrase])[] = [
  ['quickstart', 'Quickstart'],
  ['surfaces', 'APIs and base URLs'],
  ['responses', 'Responses API'],
  ['anthropic', 'Anthropic Messages'],
  ['gemini', 'Gemini API'],
  ['embeddings', 'Embeddings'],
  ['auth', 'Authentication'],
  ['endpoints', 'Endpoints'],
  ['streaming', 'Streaming'],
  ['cost', 'Cost headers'],
  ['errors', 'Errors'],
  ['limits', 'Limits'],
] as const;

export default async function DocsPage() {
  const [origin, t, locale] = await Promise.all([publicOrigin(), serverT(), currentLocale()]);
  const zh = locale === 'zh-CN';
  const config = getConfig();
  const chatModel = (protocol: string, fallback: string) =>
    [...config.models.values()].find((m) => m.kind === 'chat' && m.protocol === protocol)?.name ?? fallback;
  const model = chatModel('openai', 'gpt-4o-mini');
  // Every chat model is reachable on every surface; the examples use one each surface's users know.
  const claude = chatModel('anthropic', 'claude-sonnet-4-5');
  const gemini = chatModel('gemini', 'gemini-2.5-flash');
  const embedding = [...config.models.values()].find((m) => m.kind === 'embedding')?.name ?? 'text-embedding-3-small';
  const l = config.limits;
  return (
    <PublicShell>
      <div className="grid gap-10 lg:grid-cols-[12rem_1fr]">
        <nav aria-label={t('On this page')} className="hidden lg:block">
          <ul className="sticky top-6 space-y-2 text-sm">
            {toc.map(([id, label]) => (
              <li key={id}>
                <a href={`#${id}`} className="text-slate-600 hover:text-slate-900">
                  {t(label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="min-w-0 space-y-8">
          <div>
            <h1 className="text-3xl font-semibold tracking-tight text-slate-900">{t('API documentation')}</h1>
            <p className="mt-2 max-w-2xl text-slate-600">
              {zh ? (
                <>
                  网关在 <C>{origin}/v1</C> 提供 OpenAI API（对话补全、Responses、向量），在 <C>{origin}/v1/anthropic</C> 提供 Anthropic Messages API，在{' '}
                  <C>{origin}/v1/gemini</C> 提供 Gemini API。官方 SDK 无需改动：设置 base URL 并使用控制台中的密钥即可；每个接口都能调用所有对话模型。
                </>
              ) : (
                <>
                  The gateway speaks the OpenAI API (chat completions, Responses, embeddings) at <C>{origin}/v1</C>, the Anthropic Messages API at{' '}
                  <C>{origin}/v1/anthropic</C> and the Gemini API at <C>{origin}/v1/gemini</C>. Official SDKs work unchanged: set the base URL and use a key
                  from the dashboard. Every chat model is reachable on every one of them.
                </>
              )}
            </p>
            <p className="mt-2 max-w-2xl text-slate-600" data-testid="openapi-link">
              {zh ? (
                <>
                  全部接口（<C>/v1</C> 与账户、运营的 <C>/api</C>）的请求格式见{' '}
                  <a href="/openapi.json" className="font-medium text-indigo-700 underline">
                    OpenAPI 3.1 文档
                  </a>
                  ，可导入 Postman、Swagger UI 或代码生成工具。
                </>
              ) : (
                <>
                  Every endpoint (<C>/v1</C> and the account and operator <C>/api</C>) is described in the{' '}
                  <a href="/openapi.json" className="font-medium text-indigo-700 underline">
                    OpenAPI 3.1 document
                  </a>
                  , for Postman, Swagger UI or a client generator.
                </>
              )}
            </p>
          </div>

          <Section id="quickstart" title={t('Quickstart')}>
            <p>{t("Create a key on the dashboard's Keys page, add credit, then:")}</p>
            <CodeBlock
              label="curl"
              code={`curl ${origin}/v1/chat/completions \\
  -H "Authorization: Bearer $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello!"}]}'`}
            />
            <CodeBlock
              label="Python (openai)"
              code={`import os
from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=os.environ["GATEWAY_API_KEY"])
reply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello!"}])
print(reply.choices[0].message.content)`}
            />
            <CodeBlock
              label="JavaScript (openai)"
              code={`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: process.env.GATEWAY_API_KEY });
const reply = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello!' }] });
console.log(reply.choices[0].message.content);`}
            />
          </Section>

          <Section id="surfaces" title={t('APIs and base URLs')}>
            <div className="overflow-hidden rounded-lg border border-slate-200">
              <Table>
                <THead>
                  <tr>
                    <Th>{t('API')}</Th>
                    <Th>{t('Base URL')}</Th>
                    <Th className="hidden sm:table-cell">{t('Clients')}</Th>
                  </tr>
                </THead>
                <TBody>
                  {(
                    [
                      [
                        'quickstart',
                        t('OpenAI chat completions'),
                        `${origin}/v1`,
                        'openai (Python, Node), Vercel AI SDK, LangChain ChatOpenAI, OpenAI Agents SDK',
                      ],
                      ['responses', 'OpenAI Responses', `${origin}/v1`, 'openai (Python, Node), OpenAI Agents SDK, Codex CLI'],
                      ['anthropic', 'Anthropic Messages', `${origin}/v1/anthropic`, 'anthropic (Python, Node), Claude Code, LangChain ChatAnthropic'],
                      ['gemini', 'Gemini', `${origin}/v1/gemini`, 'google-genai (Python), @google/genai (Node), Gemini CLI'],
                      ['embeddings', t('OpenAI embeddings'), `${origin}/v1`, 'openai (Python, Node)'],
                    ] as const
                  ).map(([id, name, base, clients]) => (
                    <Tr key={id}>
                      <Td>
                        <a href={`#${id}`} className="font-medium text-indigo-700 underline">
                          {name}
                        </a>
                      </Td>
                      <Td className="font-mono text-[13px] break-all text-slate-900" data-testid={`base-url-${id}`}>
                        {base}
                        <div className="mt-1 font-sans text-xs break-normal text-slate-600 sm:hidden">{clients}</div>
                      </Td>
                      <Td className="hidden sm:table-cell">{clients}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          </Section>

          <Section id="responses" title={t('Responses API')}>
            {zh ? (
              <p>
                Base URL <C>{origin}/v1</C>：<C>POST /v1/responses</C>，以及 <C>GET</C> / <C>DELETE /v1/responses/&#123;id&#125;</C>。回复默认保存 30 天，可用{' '}
                <C>previous_response_id</C> 继续对话；所有对话模型均可使用，包括 Claude 和 Gemini。
              </p>
            ) : (
              <p>
                Base URL <C>{origin}/v1</C>: <C>POST /v1/responses</C>, and <C>GET</C> / <C>DELETE /v1/responses/&#123;id&#125;</C>. Replies are stored for 30
                days by default and continue with <C>previous_response_id</C>; every chat model works, Claude and Gemini included.
              </p>
            )}
            <CodeBlock
              label="curl"
              code={`curl ${origin}/v1/responses \\
  -H "Authorization: Bearer $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "input": "Hello!"}'`}
            />
            <CodeBlock
              label="Python (openai)"
              code={`import os
from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=os.environ["GATEWAY_API_KEY"])
reply = client.responses.create(model="${model}", input="Hello!")
print(reply.output_text)`}
            />
            <CodeBlock
              label="JavaScript (openai)"
              code={`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: process.env.GATEWAY_API_KEY });
const reply = await client.responses.create({ model: '${model}', input: 'Hello!' });
console.log(reply.output_text);`}
            />
          </Section>

          <Section id="anthropic" title={t('Anthropic Messages')}>
            {zh ? (
              <p>
                Base URL <C>{origin}/v1/anthropic</C>：<C>POST /v1/anthropic/v1/messages</C> 与 <C>…/messages/count_tokens</C>。密钥放在 <C>x-api-key</C> 或{' '}
                <C>Authorization: Bearer</C> 中。Claude Code：设置 <C>ANTHROPIC_BASE_URL={origin}/v1/anthropic</C> 和 <C>ANTHROPIC_API_KEY</C>
                ；任何对话模型都可用作 <C>ANTHROPIC_MODEL</C>。
              </p>
            ) : (
              <p>
                Base URL <C>{origin}/v1/anthropic</C>: <C>POST /v1/anthropic/v1/messages</C> and <C>…/messages/count_tokens</C>. The key goes in{' '}
                <C>x-api-key</C> or <C>Authorization: Bearer</C>. Claude Code: set <C>ANTHROPIC_BASE_URL={origin}/v1/anthropic</C> and <C>ANTHROPIC_API_KEY</C>;
                any chat model works as <C>ANTHROPIC_MODEL</C>.
              </p>
            )}
            <CodeBlock
              label="curl"
              code={`curl ${origin}/v1/anthropic/v1/messages \\
  -H "x-api-key: $GATEWAY_API_KEY" \\
  -H "anthropic-version: 2023-06-01" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${claude}", "max_tokens": 1024, "messages": [{"role": "user", "content": "Hello!"}]}'`}
            />
            <CodeBlock
              label="Python (anthropic)"
              code={`import os
from anthropic import Anthropic

client = Anthropic(base_url="${origin}/v1/anthropic", api_key=os.environ["GATEWAY_API_KEY"])
reply = client.messages.create(model="${claude}", max_tokens=1024, messages=[{"role": "user", "content": "Hello!"}])
print(reply.content[0].text)`}
            />
            <CodeBlock
              label="JavaScript (@anthropic-ai/sdk)"
              code={`import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({ baseURL: '${origin}/v1/anthropic', apiKey: process.env.GATEWAY_API_KEY });
const reply = await client.messages.create({ model: '${claude}', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello!' }] });
console.log(reply.content[0].type === 'text' ? reply.content[0].text : reply.content);`}
            />
          </Section>

          <Section id="gemini" title={t('Gemini API')}>
            {zh ? (
              <p>
                Base URL <C>{origin}/v1/gemini</C>：<C>POST /v1/gemini/v1beta/models/&#123;model&#125;:generateContent</C>、
                <C>:streamGenerateContent?alt=sse</C>、<C>:countTokens</C> 与 <C>GET /v1/gemini/v1beta/models</C>。密钥放在 <C>x-goog-api-key</C>、<C>?key=</C>{' '}
                或 <C>Authorization: Bearer</C> 中。Gemini CLI：设置 <C>GOOGLE_GEMINI_BASE_URL={origin}/v1/gemini</C> 和 <C>GEMINI_API_KEY</C>。
              </p>
            ) : (
              <p>
                Base URL <C>{origin}/v1/gemini</C>: <C>POST /v1/gemini/v1beta/models/&#123;model&#125;:generateContent</C>,{' '}
                <C>:streamGenerateContent?alt=sse</C>, <C>:countTokens</C> and <C>GET /v1/gemini/v1beta/models</C>. The key goes in <C>x-goog-api-key</C>,{' '}
                <C>?key=</C> or <C>Authorization: Bearer</C>. Gemini CLI: set <C>GOOGLE_GEMINI_BASE_URL={origin}/v1/gemini</C> and <C>GEMINI_API_KEY</C>.
              </p>
            )}
            <CodeBlock
              label="curl"
              code={`curl "${origin}/v1/gemini/v1beta/models/${gemini}:generateContent" \\
  -H "x-goog-api-key: $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"contents": [{"role": "user", "parts": [{"text": "Hello!"}]}]}'`}
            />
            <CodeBlock
              label="Python (google-genai)"
              code={`import os
from google import genai
from google.genai import types

client = genai.Client(api_key=os.environ["GATEWAY_API_KEY"], http_options=types.HttpOptions(base_url="${origin}/v1/gemini"))
reply = client.models.generate_content(model="${gemini}", contents="Hello!")
print(reply.text)`}
            />
            <CodeBlock
              label="JavaScript (@google/genai)"
              code={`import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({ apiKey: process.env.GATEWAY_API_KEY, httpOptions: { baseUrl: '${origin}/v1/gemini' } });
const reply = await ai.models.generateContent({ model: '${gemini}', contents: 'Hello!' });
console.log(reply.text);`}
            />
          </Section>

          <Section id="embeddings" title={t('Embeddings')}>
            {zh ? (
              <p>
                Base URL <C>{origin}/v1</C>：<C>POST /v1/embeddings</C>，input 为一个字符串或最多 100 个字符串；<C>encoding_format</C> 为 float 或 base64。
              </p>
            ) : (
              <p>
                Base URL <C>{origin}/v1</C>: <C>POST /v1/embeddings</C>; input is a string or up to 100 strings; <C>encoding_format</C> float or base64.
              </p>
            )}
            <CodeBlock
              label="curl"
              code={`curl ${origin}/v1/embeddings \\
  -H "Authorization: Bearer $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${embedding}", "input": ["Hello!", "Bonjour !"]}'`}
            />
            <CodeBlock
              label="Python (openai)"
              code={`import os
from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=os.environ["GATEWAY_API_KEY"])
vectors = client.embeddings.create(model="${embedding}", input=["Hello!", "Bonjour !"])
print(len(vectors.data[0].embedding))`}
            />
            <CodeBlock
              label="JavaScript (openai)"
              code={`import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${origin}/v1', apiKey: process.env.GATEWAY_API_KEY });
const vectors = await client.embeddings.create({ model: '${embedding}', input: ['Hello!', 'Bonjour !'] });
console.log(vectors.data[0].embedding.length);`}
            />
          </Section>

          <Section id="auth" title={t('Authentication')}>
            {zh ? (
              <p>
                以 <C>Authorization: Bearer &lt;key&gt;</C> 发送密钥（Anthropic 镜像也接受 <C>x-api-key</C>）。密钥以 <C>sk-gw-</C>{' '}
                开头；控制台只显示一次密钥，只保存其哈希。缺失、未知或已吊销的密钥返回 401；账户被暂停或所用模型不在你的等级内返回 403。
              </p>
            ) : (
              <p>
                Send the key as <C>Authorization: Bearer &lt;key&gt;</C> (the Anthropic mirror also takes <C>x-api-key</C>). Keys start with <C>sk-gw-</C>; the
                dashboard shows a key once and stores only its hash. A missing, unknown or revoked key gets 401; a suspended account, or a model your tier may
                not use, 403.
              </p>
            )}
          </Section>

          <Section id="endpoints" title={t('Endpoints')}>
            <div className="overflow-hidden rounded-lg border border-slate-200">
              <Table>
                <THead>
                  <tr>
                    <Th>{t('Endpoint')}</Th>
                    <Th className="hidden sm:table-cell">{t('What it does')}</Th>
                  </tr>
                </THead>
                <TBody>
                  {[
                    ['POST /v1/chat/completions', t('Chat completions, streaming, tools, JSON mode. model: "service-auto" lets the router choose.')],
                    [
                      'POST /v1/embeddings',
                      t('Embeddings ({model} and others); input is a string or up to 100 strings; float or base64.', { model: embedding }),
                    ],
                    ['GET /v1/models', t('The models your tier may call, with context window, tags and prices.')],
                    ['POST /v1/anthropic/v1/messages', t('Anthropic Messages, forwarded verbatim (cache_control, anthropic-version and -beta headers).')],
                    ['POST /v1/anthropic/v1/messages/count_tokens', t('Token counting on the Anthropic mirror (not billed).')],
                    ['POST /v1/responses', t('The OpenAI Responses API on every chat model; GET and DELETE /v1/responses/{id} for stored replies.')],
                    [
                      'POST /v1/gemini/v1beta/models/{model}:generateContent',
                      t('The Gemini API on every chat model; :streamGenerateContent, :countTokens and GET /v1/gemini/v1beta/models too.'),
                    ],
                  ].map(([path, what]) => (
                    <Tr key={path}>
                      <Td className="font-mono text-[13px] break-all text-slate-900">
                        {path}
                        <div className="mt-1 font-sans text-xs break-normal text-slate-600 sm:hidden">{what}</div>
                      </Td>
                      <Td className="hidden sm:table-cell">{what}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          </Section>

          <Section id="streaming" title={t('Streaming')}>
            {zh ? (
              <p>
                设置 <C>&quot;stream&quot;: true</C> 后，回复以 server-sent events 返回：每行 <C>data: &#123;…&#125;</C> 是一个 <C>chat.completion.chunk</C>，以{' '}
                <C>data: [DONE]</C> 结束。加上 <C>&quot;stream_options&quot;: &#123;&quot;include_usage&quot;: true&#125;</C> 可在最后一个分块中得到 token
                用量及费用（<C>usage.cost_usd</C>、<C>usage.cost_cny</C>）。
              </p>
            ) : (
              <p>
                With <C>&quot;stream&quot;: true</C> the reply comes as server-sent events: <C>data: &#123;…&#125;</C> lines, each a{' '}
                <C>chat.completion.chunk</C>, ending with <C>data: [DONE]</C>. Add{' '}
                <C>&quot;stream_options&quot;: &#123;&quot;include_usage&quot;: true&#125;</C> for a last chunk with the token usage and its cost (
                <C>usage.cost_usd</C>, <C>usage.cost_cny</C>).
              </p>
            )}
          </Section>

          <Section id="cost" title={t('Cost headers')}>
            <p>{t('Every /v1 response says what it cost and what served it:')}</p>
            <TermTable
              nowrap
              rows={[
                ['X-Service-Cost-USD', t('Exact dollars charged (for streams: "pending"; the figure follows as a trailer and in the usage chunk)')],
                ['X-Service-Cost-CNY', t('The same in yuan, at the rate of the request')],
                ['X-Service-Model-Id', t('The model that served; differs from the requested one after a fallback')],
                ['X-Service-Provider', t('The upstream channel that served')],
                ['X-Service-Latency-Ms', t('Time in the gateway and upstream, in milliseconds')],
                ['x-request-id', t('The id to look the request up on the dashboard’s Logs page')],
              ]}
            />
          </Section>

          <Section id="errors" title={t('Errors')}>
            {zh ? (
              <p>
                错误使用 OpenAI 的格式{' '}
                <C>&#123;&quot;error&quot;: &#123;&quot;message&quot;, &quot;type&quot;, &quot;param&quot;, &quot;code&quot;&#125;&#125;</C>（Anthropic 镜像使用
                Anthropic 的格式，<C>/v1/gemini</C> 使用 Google 的{' '}
                <C>&#123;&quot;error&quot;: &#123;&quot;code&quot;, &quot;message&quot;, &quot;status&quot;&#125;&#125;</C>）。重试无法解决的错误带有{' '}
                <C>x-should-retry: false</C>。
              </p>
            ) : (
              <p>
                Errors use the OpenAI envelope{' '}
                <C>&#123;&quot;error&quot;: &#123;&quot;message&quot;, &quot;type&quot;, &quot;param&quot;, &quot;code&quot;&#125;&#125;</C> (the Anthropic one
                on the mirror, Google&apos;s <C>&#123;&quot;error&quot;: &#123;&quot;code&quot;, &quot;message&quot;, &quot;status&quot;&#125;&#125;</C> on{' '}
                <C>/v1/gemini</C>). Errors a retry cannot fix carry <C>x-should-retry: false</C>.
              </p>
            )}
            <TermTable
              rows={[
                ['400', t('Invalid request body, unknown model')],
                ['401', t('Missing, unknown or revoked key')],
                ['402', t('Insufficient balance: add credit')],
                ['403', t('Account suspended, or model not allowed on your tier')],
                ['413', t('Body larger than {n} MiB', { n: formatCount(Math.floor(l.max_body_bytes / 1024 / 1024)) })],
                ['429', t('A rate limit was exceeded: wait Retry-After seconds (retry-after-ms for milliseconds)')],
                ['502', t('Every upstream channel failed')],
                ['503', t('Maintenance, or the gateway is shedding load')],
              ]}
            />
          </Section>

          <Section id="limits" title={t('Limits')}>
            {zh ? (
              <p>
                每分钟和每小时请求数、每日 token 数与并发请求数按账户等级限制（见{' '}
                <a href="/pricing" className="font-medium text-indigo-700 underline">
                  价格
                </a>
                ），部分模型另有自己的上限。每个响应都带有 <C>x-ratelimit-limit-requests</C>、<C>x-ratelimit-remaining-requests</C> 和{' '}
                <C>x-ratelimit-reset-requests</C>。Embeddings：每分钟 {formatCount(l.embeddings_rpm)} 个请求，每个请求最多 100 条输入。
              </p>
            ) : (
              <p>
                Requests per minute and hour, tokens per day and concurrent requests are limited per account by tier (see{' '}
                <a href="/pricing" className="font-medium text-indigo-700 underline">
                  Pricing
                </a>
                ), and some models have caps of their own. Every response carries <C>x-ratelimit-limit-requests</C>, <C>x-ratelimit-remaining-requests</C> and{' '}
                <C>x-ratelimit-reset-requests</C>. Embeddings: {formatCount(l.embeddings_rpm)} requests per minute, at most 100 inputs per request.
              </p>
            )}
          </Section>
        </div>
      </div>
    </PublicShell>
  );
}

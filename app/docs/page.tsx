import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { getConfig } from '@/lib/config';
import { publicOrigin } from '@/lib/dashboard/origin';
import { formatCount } from '@/lib/format';
import { CodeBlock } from '@/components/ui/code-block';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { PublicShell } from '@/components/site/public-shell';

export const metadata: Metadata = { title: 'API docs · Model Gateway', description: 'Endpoints, authentication, errors, limits and cost headers of the gateway API.' };

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

const C = ({ children }: { children: ReactNode }) => <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[13px] text-slate-900">{children}</code>;

const toc = [
  ['quickstart', 'Quickstart'],
  ['auth', 'Authentication'],
  ['endpoints', 'Endpoints'],
  ['streaming', 'Streaming'],
  ['cost', 'Cost headers'],
  ['errors', 'Errors'],
  ['limits', 'Limits'],
] as const;

export default async function DocsPage() {
  const origin = await publicOrigin();
  const config = getConfig();
  const model = [...config.models.values()].find((m) => m.kind === 'chat' && m.protocol === 'openai')?.name ?? 'gpt-4o-mini';
  const embedding = [...config.models.values()].find((m) => m.kind === 'embedding')?.name ?? 'text-embedding-3-small';
  const l = config.limits;
  return (
    <PublicShell>
      <div className="grid gap-10 lg:grid-cols-[12rem_1fr]">
        <nav aria-label="On this page" className="hidden lg:block">
          <ul className="sticky top-6 space-y-2 text-sm">
            {toc.map(([id, label]) => (
              <li key={id}>
                <a href={`#${id}`} className="text-slate-600 hover:text-slate-900">
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div className="min-w-0 space-y-8">
          <div>
            <h1 className="text-3xl font-semibold tracking-tight text-slate-900">API documentation</h1>
            <p className="mt-2 max-w-2xl text-slate-600">
              The gateway speaks the OpenAI API at <C>{origin}/v1</C> and the Anthropic Messages API at <C>{origin}/v1/anthropic</C>. Official SDKs work unchanged: set the base URL and use a key from the dashboard.
            </p>
          </div>

          <Section id="quickstart" title="Quickstart">
            <p>Create a key on the dashboard&apos;s Keys page, add credit, then:</p>
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

          <Section id="auth" title="Authentication">
            <p>
              Send the key as <C>Authorization: Bearer &lt;key&gt;</C> (the Anthropic mirror also takes <C>x-api-key</C>). Keys start with <C>sk-gw-</C>; the dashboard shows a key once and stores only its hash. A missing, unknown or revoked key gets 401; a suspended account, or a model your tier may not use, 403.
            </p>
          </Section>

          <Section id="endpoints" title="Endpoints">
            <div className="overflow-hidden rounded-lg border border-slate-200">
              <Table>
                <THead>
                  <tr>
                    <Th>Endpoint</Th>
                    <Th className="hidden sm:table-cell">What it does</Th>
                  </tr>
                </THead>
                <TBody>
                  {[
                    ['POST /v1/chat/completions', 'Chat completions, streaming, tools, JSON mode. model: "service-auto" lets the router choose.'],
                    ['POST /v1/embeddings', `Embeddings (${embedding} and others); input is a string or up to 100 strings; float or base64.`],
                    ['GET /v1/models', 'The models your tier may call, with context window, tags and prices.'],
                    ['POST /v1/anthropic/v1/messages', 'Anthropic Messages, forwarded verbatim (cache_control, anthropic-version and -beta headers).'],
                    ['POST /v1/anthropic/v1/messages/count_tokens', 'Token counting on the Anthropic mirror (not billed).'],
                  ].map(([path, what]) => (
                    <Tr key={path}>
                      <Td className="font-mono text-[13px] text-slate-900">
                        {path}
                        <div className="mt-1 font-sans text-xs text-slate-600 sm:hidden">{what}</div>
                      </Td>
                      <Td className="hidden sm:table-cell">{what}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          </Section>

          <Section id="streaming" title="Streaming">
            <p>
              With <C>&quot;stream&quot;: true</C> the reply comes as server-sent events: <C>data: &#123;…&#125;</C> lines, each a <C>chat.completion.chunk</C>, ending with <C>data: [DONE]</C>. Add <C>&quot;stream_options&quot;: &#123;&quot;include_usage&quot;: true&#125;</C> for a last chunk with the token usage and its cost (<C>usage.cost_usd</C>, <C>usage.cost_cny</C>).
            </p>
          </Section>

          <Section id="cost" title="Cost headers">
            <p>Every /v1 response says what it cost and what served it:</p>
            <div className="overflow-hidden rounded-lg border border-slate-200">
              <Table>
                <TBody>
                  {[
                    ['X-Service-Cost-USD', 'Exact dollars charged (for streams: "pending"; the figure follows as a trailer and in the usage chunk)'],
                    ['X-Service-Cost-CNY', 'The same in yuan, at the rate of the request'],
                    ['X-Service-Model-Id', 'The model that served; differs from the requested one after a fallback'],
                    ['X-Service-Provider', 'The upstream channel that served'],
                    ['X-Service-Latency-Ms', 'Time in the gateway and upstream, in milliseconds'],
                    ['x-request-id', 'The id to look the request up on the dashboard’s Logs page'],
                  ].map(([h, what]) => (
                    <Tr key={h}>
                      <Td className="whitespace-nowrap font-mono text-[13px] text-slate-900">{h}</Td>
                      <Td>{what}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          </Section>

          <Section id="errors" title="Errors">
            <p>
              Errors use the OpenAI envelope <C>&#123;&quot;error&quot;: &#123;&quot;message&quot;, &quot;type&quot;, &quot;param&quot;, &quot;code&quot;&#125;&#125;</C> (the Anthropic one on the mirror). Errors a retry cannot fix carry <C>x-should-retry: false</C>.
            </p>
            <div className="overflow-hidden rounded-lg border border-slate-200">
              <Table>
                <TBody>
                  {[
                    ['400', 'Invalid request body, unknown model'],
                    ['401', 'Missing, unknown or revoked key'],
                    ['402', 'Insufficient balance: add credit'],
                    ['403', 'Account suspended, or model not allowed on your tier'],
                    ['413', `Body larger than ${formatCount(Math.floor(l.max_body_bytes / 1024 / 1024))} MiB`],
                    ['429', 'A rate limit was exceeded: wait Retry-After seconds (retry-after-ms for milliseconds)'],
                    ['502', 'Every upstream channel failed'],
                    ['503', 'Maintenance, or the gateway is shedding load'],
                  ].map(([code, what]) => (
                    <Tr key={code}>
                      <Td className="font-mono text-[13px] text-slate-900">{code}</Td>
                      <Td>{what}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            </div>
          </Section>

          <Section id="limits" title="Limits">
            <p>
              Requests per minute and hour, tokens per day and concurrent requests are limited per account by tier (see <a href="/pricing" className="font-medium text-indigo-700 underline">Pricing</a>), and some models have caps of their own. Every response carries <C>x-ratelimit-limit-requests</C>, <C>x-ratelimit-remaining-requests</C> and <C>x-ratelimit-reset-requests</C>. Embeddings: {formatCount(l.embeddings_rpm)} requests per minute, at most 100 inputs per request.
            </p>
          </Section>
        </div>
      </div>
    </PublicShell>
  );
}

import { currentMessages, serverT } from '@/lib/i18n/server';
import type { Phrase } from '@/lib/i18n/translate';
import { LanguageSwitch } from '@/components/ui/language-switch';
import Link from 'next/link';
import { getConfig } from '@/lib/config';
import { publicOrigin } from '@/lib/http/origin';
import { sessionUser } from '@/lib/dashboard/session';
import { ButtonLink } from '@/components/ui/button';
import { CodeTabs } from '@/components/ui/code-tabs';
import { CopyButton } from '@/components/ui/copy-button';
import { Logo } from '@/components/ui/logo';
import { TierTable } from '@/components/site/tier-table';

function snippets(origin: string, openaiModel: string, anthropicModel: string) {
  return [
    {
      id: 'curl',
      label: 'curl',
      code: `curl ${origin}/v1/chat/completions \\
  -H "Authorization: Bearer $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "${openaiModel}",
    "messages": [{"role": "user", "content": "Hello!"}]
  }'`,
    },
    {
      id: 'openai',
      label: 'OpenAI SDK (JS)',
      code: `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: '${origin}/v1',
  apiKey: process.env.GATEWAY_API_KEY,
});

const completion = await client.chat.completions.create({
  model: '${openaiModel}',
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(completion.choices[0].message.content);`,
    },
    {
      id: 'anthropic',
      label: 'Anthropic SDK',
      code: `import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: '${origin}/v1/anthropic',
  apiKey: process.env.GATEWAY_API_KEY,
});

const message = await client.messages.create({
  model: '${anthropicModel}',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(message.content);`,
    },
  ];
}

const features: { title: Phrase; body: Phrase }[] = [
  {
    title: 'Drop-in compatible',
    body: 'Change the base URL, keep your code. Chat completions, streaming, tools, embeddings and model listing speak the OpenAI wire format; /v1/anthropic forwards the Messages API verbatim.',
  },
  {
    title: 'Routing with fallback',
    body: 'When a channel fails the router retries another, or falls back to a sibling model. Ask for service-auto and it picks for you. X-Service-Model-Id always says what served.',
  },
  {
    title: 'Exact cost per request',
    body: 'Every response carries X-Service-Cost-USD and X-Service-Cost-CNY. The dashboard logs each request with tokens, latency, channel and cost, exportable to CSV.',
  },
  {
    title: 'Limits that grow with you',
    body: 'Per-tier rate, token and concurrency limits with standard 429s and Retry-After. Tiers upgrade automatically as your monthly spend grows.',
  },
];

export default async function LandingPage() {
  const [origin, user, { locale, t: m }, tr] = await Promise.all([publicOrigin(), sessionUser(), currentMessages(), serverT()]);
  const config = getConfig();
  const models = [...config.models.values()];
  const chat = models.filter((m) => m.kind === 'chat');
  const openaiModel = chat.find((m) => m.protocol === 'openai' && m.tiers.has('free'))?.name ?? chat[0]?.name ?? 'gpt-4o-mini';
  const anthropicModel = chat.find((m) => m.protocol === 'anthropic')?.name ?? 'claude-sonnet-4-5';
  const providers = [...new Set(models.map((m) => m.ownedBy))];

  return (
    <div className="min-h-screen bg-white">
      <header className="border-b border-slate-100">
        <div className="mx-auto flex h-14 max-w-6xl items-center gap-3 px-4 sm:px-6">
          <Logo />
          <nav aria-label={tr('Site')} className="ml-auto flex items-center gap-1 sm:gap-2">
            <Link href="/pricing" className="px-2 text-sm text-slate-700 hover:text-slate-900">
              {tr('Pricing')}
            </Link>
            <Link href="/docs" className="px-2 text-sm text-slate-700 hover:text-slate-900">
              {tr('Docs')}
            </Link>
            {user ? (
              <ButtonLink href="/dashboard" size="sm">
                {tr('Dashboard')}
              </ButtonLink>
            ) : (
              <>
                <ButtonLink href="/login" variant="ghost" size="sm" className="hidden sm:inline-flex">
                  {tr('Log in')}
                </ButtonLink>
                <ButtonLink href="/register" size="sm">
                  {tr('Sign up')}
                </ButtonLink>
              </>
            )}
            <LanguageSwitch locale={locale} label={m.language} className="hidden sm:flex" />
          </nav>
        </div>
      </header>

      <main>
        <section className="mx-auto grid max-w-6xl gap-10 px-4 py-14 sm:px-6 sm:py-20 lg:grid-cols-[1fr_1.1fr] lg:items-center">
          <div>
            <p className="text-sm font-medium text-indigo-600">
              {tr('{models} models · {providers} providers · one key', { models: models.length, providers: providers.length })}
            </p>
            <h1 className="mt-3 text-4xl font-semibold tracking-tight text-slate-900 sm:text-5xl">{tr('One OpenAI-compatible endpoint for every model.')}</h1>
            <p className="mt-4 max-w-xl text-lg text-slate-600">
              {tr(
                'Point your OpenAI or Anthropic client at the gateway and keep your code. Requests are routed with fallback, limited by tier and billed exactly, in USD and CNY.',
              )}
            </p>
            <div className="mt-8 flex flex-wrap gap-3">
              {user ? (
                <ButtonLink href="/dashboard">{tr('Open the dashboard')}</ButtonLink>
              ) : (
                <>
                  <ButtonLink href="/register">{tr('Create an account')}</ButtonLink>
                  <ButtonLink href="/login" variant="secondary">
                    {tr('Log in')}
                  </ButtonLink>
                </>
              )}
            </div>
            <div className="mt-8 inline-flex max-w-full items-center gap-2 rounded-md border border-slate-200 bg-slate-50 py-1 pl-3 pr-1">
              <span className="text-xs text-slate-500">{tr('Base URL')}</span>
              <code className="truncate font-mono text-sm text-slate-900" data-testid="base-url">
                {origin}/v1
              </code>
              <CopyButton value={`${origin}/v1`} variant="ghost" />
            </div>
          </div>
          <div id="quickstart" className="min-w-0">
            <CodeTabs tabs={snippets(origin, openaiModel, anthropicModel)} />
            <p className="mt-3 text-sm text-slate-500">
              {tr('Create a key in the dashboard and export it as')} <code className="font-mono text-slate-700">GATEWAY_API_KEY</code>.
            </p>
          </div>
        </section>

        <section className="border-y border-slate-100 bg-slate-50">
          <div className="mx-auto grid max-w-6xl gap-8 px-4 py-14 sm:grid-cols-2 sm:px-6 lg:grid-cols-4">
            {features.map((f) => (
              <div key={f.title}>
                <h2 className="text-sm font-semibold text-slate-900">{tr(f.title)}</h2>
                <p className="mt-2 text-sm leading-relaxed text-slate-600">{tr(f.body)}</p>
              </div>
            ))}
          </div>
        </section>

        <section className="mx-auto max-w-6xl px-4 py-14 sm:px-6">
          <h2 className="text-xl font-semibold tracking-tight text-slate-900">{tr('Tiers')}</h2>
          <p className="mt-1 text-sm text-slate-500">{tr('Prepaid, pay per token. Limits per account; every key of the account shares them.')}</p>
          <div className="mt-6 overflow-hidden rounded-lg border border-slate-200">
            <TierTable />
          </div>
        </section>
      </main>

      <footer className="border-t border-slate-100">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-3 px-4 py-6 text-sm text-slate-500 sm:px-6">
          <Logo className="text-sm" />
          <div className="flex gap-4">
            <Link href="/login" className="hover:text-slate-900">
              {tr('Log in')}
            </Link>
            <Link href="/register" className="hover:text-slate-900">
              {tr('Sign up')}
            </Link>
          </div>
        </div>
      </footer>
    </div>
  );
}

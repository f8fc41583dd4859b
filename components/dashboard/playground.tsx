'use client';

import { useT } from '@/lib/i18n/client';
import type { Translate } from '@/lib/i18n/translate';
import { useMemo, useRef, useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { CodeTabs } from '@/components/ui/code-tabs';
import { Field, Input, Select } from '@/components/ui/input';
import { formatMoneyText } from '@/lib/format';
import { curlSnippet, pythonSnippet, typescriptSnippet, type ChatBody } from './playground-snippets';

export interface PlaygroundModel {
  name: string;
  /** The protocol of its channels: the picker groups by it (every model is called on the OpenAI chat surface, translated). */
  protocol: 'openai' | 'anthropic' | 'gemini';
  maxOutputTokens: number;
}

interface TurnMeta {
  requestId: string | null;
  model: string | null;
  provider: string | null;
  /** Exact decimal text of the charge (header, or the stream's closing usage chunk). */
  costUsd: string | null;
  firstTokenMs: number | null;
  totalMs: number | null;
}

interface Turn {
  role: 'user' | 'assistant';
  content: string;
  meta?: TurnMeta;
  pending?: boolean;
}

type FieldName = 'temperature' | 'maxTokens' | 'tools' | 'draft';

// Brand names, the same in every language; the OpenAI group's label is translated.
const PROTOCOL_LABEL: Record<'anthropic' | 'gemini', string> = { anthropic: 'Claude (Anthropic)', gemini: 'Gemini (Google)' };

/** The provider label a reply names (the header carries the channel's public label, percent-encoded outside ASCII). */
function providerOf(label: string | null): string | null {
  if (label === null || label === 'none' || label === '') return null;
  try {
    return decodeURIComponent(label);
  } catch {
    return label;
  }
}

const textarea =
  'block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm placeholder:text-slate-400 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/20 aria-invalid:border-red-400';

/** A tool list as the OpenAI chat API takes it; the problem in words, or null. */
function toolsProblem(text: string, t: Translate): { problem: string | null; tools?: unknown[] } {
  if (!text.trim()) return { problem: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: t('Tools must be valid JSON.') };
  }
  if (!Array.isArray(value)) return { problem: t('Tools must be a JSON array of tool objects.') };
  for (const [i, tool] of value.entries()) {
    const fn = (tool as { function?: { name?: unknown; parameters?: unknown } } | null)?.function;
    if (typeof tool !== 'object' || tool === null || (tool as { type?: unknown }).type !== 'function' || typeof fn !== 'object' || fn === null) {
      return { problem: t('Tool {n}: write it as {"type": "function", "function": {"name": …, "parameters": {…}}}.', { n: i + 1 }) };
    }
    if (typeof fn.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(fn.name)) {
      return { problem: t('Tool {n}: the function needs a name of letters, digits, _ or - (up to 64).', { n: i + 1 }) };
    }
    if (fn.parameters !== undefined && (typeof fn.parameters !== 'object' || fn.parameters === null || Array.isArray(fn.parameters))) {
      return { problem: t('Tool {n}: "parameters" must be a JSON Schema object.', { n: i + 1 }) };
    }
  }
  return { problem: null, tools: value };
}

/** The exact decimal of `"cost_usd": …` in a raw stream line (parsed as a JSON number it would lose digits). */
const streamedCost = (line: string) => /"cost_usd":\s*(-?[0-9][0-9.eE+-]*)/.exec(line)?.[1] ?? null;

/**
 * The dashboard playground: calls the gateway as the signed-in account with a short-lived session
 * credential (POST /api/playground/token, kept in memory and never shown), so each turn is admitted,
 * limited, billed and logged like a key's request, under "Playground". Multi-turn with a system
 * prompt, parameters, streaming as it arrives, each turn's cost and latency, and the exact request
 * as curl / Python / TypeScript with $GATEWAY_API_KEY for the key.
 */
export function Playground({ models, baseUrl }: { models: PlaygroundModel[]; baseUrl: string }) {
  const t = useT();
  const [model, setModel] = useState(models[0]?.name ?? '');
  const [system, setSystem] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [tools, setTools] = useState('');
  const [stream, setStream] = useState(true);
  const [draft, setDraft] = useState(() => t('Say hello in one short sentence.'));
  const [turns, setTurns] = useState<Turn[]>([]);
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [lastBody, setLastBody] = useState<ChatBody | null>(null);
  const abort = useRef<AbortController | null>(null);
  const credential = useRef<{ token: string; expiresAt: number } | null>(null);

  const info = models.find((m) => m.name === model);
  const groups = useMemo(() => {
    const order: PlaygroundModel['protocol'][] = ['anthropic', 'gemini', 'openai'];
    return order.map((p) => ({ protocol: p, names: models.filter((m) => m.protocol === p).map((m) => m.name) })).filter((g) => g.names.length > 0);
  }, [models]);

  /** The request body for the conversation so far plus `message`, or the problems by field. */
  function build(message: string): { body?: ChatBody; problems: Partial<Record<FieldName, string>> } {
    const problems: Partial<Record<FieldName, string>> = {};
    const body: ChatBody = { model };
    const messages: { role: string; content: string }[] = [];
    if (system.trim()) messages.push({ role: 'system', content: system });
    for (const turn of turns) if (!turn.pending) messages.push({ role: turn.role, content: turn.content });
    if (!message.trim()) problems.draft = t('Write a message first.');
    messages.push({ role: 'user', content: message });
    body.messages = messages;
    if (temperature.trim()) {
      const n = Number(temperature);
      if (!/^\s*\d*\.?\d+\s*$/.test(temperature) || !(n >= 0 && n <= 2)) problems.temperature = t('Temperature must be a number from 0 to 2.');
      else body.temperature = n;
    }
    if (maxTokens.trim()) {
      const n = Number(maxTokens);
      const max = info?.maxOutputTokens ?? 1_000_000;
      if (!/^\s*\d+\s*$/.test(maxTokens) || n < 1 || n > max) problems.maxTokens = t('Max tokens must be a whole number from 1 to {max}.', { max });
      else body.max_tokens = n;
    }
    const checked = toolsProblem(tools, t);
    if (checked.problem) problems.tools = checked.problem;
    else if (checked.tools) body.tools = checked.tools;
    body.stream = stream;
    if (stream) body.stream_options = { include_usage: true };
    return Object.keys(problems).length ? { problems } : { body, problems };
  }

  /** A session credential with at least 30 s left, minted when needed. */
  async function sessionCredential(): Promise<string> {
    const held = credential.current;
    if (held && held.expiresAt - Date.now() > 30_000) return held.token;
    const res = await fetch('/api/playground/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await res.json().catch(() => null)) as { token?: string; expires_at?: string; error?: { message?: string } } | null;
    if (res.status === 401) throw new Error(t('Your session has ended. Sign in again to use the playground.'));
    if (!res.ok || !body?.token) throw new Error(body?.error?.message ?? t('The request failed ({status}).', { status: res.status }));
    credential.current = { token: body.token, expiresAt: Date.parse(body.expires_at ?? '') || Date.now() + 60_000 };
    return body.token;
  }

  function updateReply(patch: Omit<Partial<Turn>, 'meta'> & { meta?: Partial<TurnMeta> }) {
    setTurns((all) => all.map((turn, i) => (i === all.length - 1 ? { ...turn, ...patch, meta: { ...turn.meta!, ...patch.meta } } : turn)));
  }

  async function send(e: FormEvent) {
    e.preventDefault();
    const { body, problems } = build(draft);
    setErrors(problems);
    if (!body) return;
    setError(null);
    setBusy(true);
    setLastBody(body);
    const message = draft;
    const meta: TurnMeta = { requestId: null, model: null, provider: null, costUsd: null, firstTokenMs: null, totalMs: null };
    setTurns((all) => [...all, { role: 'user', content: message }, { role: 'assistant', content: '', pending: true, meta }]);
    setDraft('');
    const controller = new AbortController();
    abort.current = controller;
    const failed = (text: string) => {
      setError(text);
      setTurns((all) => all.slice(0, -2));
      setDraft(message);
    };
    try {
      const token = await sessionCredential();
      const started = performance.now();
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const head: TurnMeta = {
        ...meta,
        requestId: res.headers.get('x-request-id'),
        model: res.headers.get('x-service-model-id'),
        provider: providerOf(res.headers.get('x-service-provider')),
        costUsd: res.headers.get('x-service-cost-usd'),
      };
      if (!res.ok) {
        const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        if (res.status === 401) credential.current = null;
        return failed(`${res.status}: ${err?.error?.message ?? res.statusText}`);
      }
      if (!body.stream) {
        const reply = (await res.json()) as { choices?: { message?: { content?: string | null; tool_calls?: unknown[] } }[] };
        const msg = reply.choices?.[0]?.message;
        const content = msg?.content || (msg?.tool_calls ? JSON.stringify(msg.tool_calls, null, 2) : '');
        const ms = Math.round(performance.now() - started);
        updateReply({ content, pending: false, meta: { ...head, firstTokenMs: ms, totalMs: ms } });
        return;
      }
      updateReply({ meta: head });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let text = '';
      let cost = head.costUsd;
      let firstToken: number | null = null;
      const toolCalls: { name: string; arguments: string }[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          let chunk: {
            choices?: { delta?: { content?: string | null; tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] } }[];
            usage?: unknown;
            error?: { message?: string };
          };
          try {
            chunk = JSON.parse(line.slice(6));
          } catch {
            continue;
          }
          if (chunk.error) setError(chunk.error.message ?? t('The stream ended with an error.'));
          const delta = chunk.choices?.[0]?.delta;
          for (const call of delta?.tool_calls ?? []) {
            const slot = (toolCalls[call.index] ??= { name: '', arguments: '' });
            slot.name += call.function?.name ?? '';
            slot.arguments += call.function?.arguments ?? '';
          }
          if (delta?.content || delta?.tool_calls) {
            firstToken ??= Math.round(performance.now() - started);
            text += delta.content ?? '';
            const calls = toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
            updateReply({ content: calls ? `${text}${text ? '\n' : ''}${calls}` : text, meta: { firstTokenMs: firstToken } });
          }
          if (chunk.usage) cost = streamedCost(line) ?? cost;
        }
      }
      updateReply({ pending: false, meta: { costUsd: cost, firstTokenMs: firstToken, totalMs: Math.round(performance.now() - started) } });
    } catch (err) {
      if ((err as Error).name === 'AbortError') updateReply({ pending: false });
      else failed(err instanceof TypeError ? t('Network error: the request did not complete.') : (err as Error).message);
    } finally {
      setBusy(false);
      abort.current = null;
    }
  }

  const snippetBody = lastBody ?? build(draft).body ?? null;
  const snippets = snippetBody
    ? { curl: curlSnippet(baseUrl, snippetBody), python: pythonSnippet(baseUrl, snippetBody), typescript: typescriptSnippet(baseUrl, snippetBody) }
    : null;

  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-[minmax(0,20rem)_minmax(0,1fr)] [&>*]:min-w-0">
      <section aria-label={t('Settings')} className="space-y-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:p-5">
        <Field label={t('Model')} htmlFor="pg-model" hint={t('Every model your tier may call, whatever its provider; called on the OpenAI chat API.')}>
          <Select id="pg-model" value={model} onChange={(e) => setModel(e.target.value)} data-testid="pg-model">
            {groups.map((g) => (
              <optgroup key={g.protocol} label={g.protocol === 'openai' ? t('OpenAI-compatible models') : PROTOCOL_LABEL[g.protocol]}>
                {g.names.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </optgroup>
            ))}
          </Select>
        </Field>
        <Field label={t('System prompt')} htmlFor="pg-system">
          <textarea
            id="pg-system"
            rows={3}
            value={system}
            onChange={(e) => setSystem(e.target.value)}
            placeholder={t('Optional: instructions for the whole conversation.')}
            className={textarea}
            data-testid="pg-system"
          />
        </Field>
        <div className="grid grid-cols-2 gap-3">
          <FieldWithError label={t('Temperature')} id="pg-temperature" error={errors.temperature}>
            <Input
              id="pg-temperature"
              inputMode="decimal"
              placeholder="1"
              value={temperature}
              onChange={(e) => setTemperature(e.target.value)}
              aria-invalid={errors.temperature ? true : undefined}
              aria-describedby={errors.temperature ? 'pg-temperature-error' : undefined}
              data-testid="pg-temperature"
            />
          </FieldWithError>
          <FieldWithError label={t('Max tokens')} id="pg-max-tokens" error={errors.maxTokens}>
            <Input
              id="pg-max-tokens"
              inputMode="numeric"
              placeholder={info ? String(info.maxOutputTokens) : ''}
              value={maxTokens}
              onChange={(e) => setMaxTokens(e.target.value)}
              aria-invalid={errors.maxTokens ? true : undefined}
              aria-describedby={errors.maxTokens ? 'pg-max-tokens-error' : undefined}
              data-testid="pg-max-tokens"
            />
          </FieldWithError>
        </div>
        <FieldWithError label={t('Tools (JSON)')} id="pg-tools" error={errors.tools}>
          <textarea
            id="pg-tools"
            rows={4}
            value={tools}
            onChange={(e) => setTools(e.target.value)}
            placeholder='[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]'
            spellCheck={false}
            className={`${textarea} font-mono text-xs`}
            aria-invalid={errors.tools ? true : undefined}
            aria-describedby={errors.tools ? 'pg-tools-error' : undefined}
            data-testid="pg-tools"
          />
        </FieldWithError>
        <label className="flex items-center gap-2 text-sm text-slate-700">
          <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} className="h-4 w-4" data-testid="pg-stream" />{' '}
          {t('Stream the reply')}
        </label>
        <p className="text-xs text-slate-500">
          {t('Sent as you, signed in: billed to your balance and listed in your logs as “Playground”. No API key needed.')}
        </p>
      </section>

      <div className="space-y-4">
        {error && (
          <Alert tone="error" data-testid="pg-error">
            {error}
          </Alert>
        )}
        <section aria-label={t('Conversation')} className="rounded-lg border border-slate-200 bg-white shadow-sm">
          <div className="flex items-center justify-between gap-2 border-b border-slate-200 px-4 py-3 sm:px-5">
            <h2 className="text-sm font-semibold text-slate-900">{t('Conversation')}</h2>
            <Button
              variant="ghost"
              size="sm"
              disabled={busy || turns.length === 0}
              onClick={() => {
                setTurns([]);
                setLastBody(null);
                setError(null);
              }}
              data-testid="pg-clear"
            >
              {t('New conversation')}
            </Button>
          </div>
          <ol className="space-y-3 p-4 sm:p-5" aria-live="polite" data-testid="pg-turns">
            {turns.length === 0 && <li className="text-sm text-slate-500">{t('Nothing sent yet.')}</li>}
            {turns.map((turn, i) => (
              <li key={i} className={turn.role === 'user' ? 'flex justify-end' : ''} data-testid={`pg-turn-${turn.role}`}>
                <div
                  className={
                    turn.role === 'user'
                      ? 'max-w-[85%] rounded-lg bg-indigo-50 px-3 py-2 text-sm text-slate-900'
                      : 'rounded-lg border border-slate-200 px-3 py-2 text-sm text-slate-800'
                  }
                >
                  <p className="whitespace-pre-wrap break-words" data-testid={turn.role === 'assistant' ? 'pg-reply' : undefined}>
                    {turn.content || (turn.pending ? <span className="text-slate-500">{t('Waiting for the first token…')}</span> : '')}
                  </p>
                  {turn.meta && !turn.pending && <TurnFacts meta={turn.meta} t={t} />}
                </div>
              </li>
            ))}
          </ol>
          <form onSubmit={send} className="space-y-2 border-t border-slate-200 p-4 sm:p-5" noValidate>
            <label htmlFor="pg-prompt" className="sr-only">
              {t('Message')}
            </label>
            <textarea
              id="pg-prompt"
              rows={3}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) e.currentTarget.form?.requestSubmit();
              }}
              placeholder={t('Message')}
              className={textarea}
              aria-invalid={errors.draft ? true : undefined}
              aria-describedby={errors.draft ? 'pg-prompt-error' : undefined}
              data-testid="pg-prompt"
            />
            {errors.draft && (
              <p id="pg-prompt-error" className="text-xs text-red-700" data-testid="pg-prompt-error">
                {errors.draft}
              </p>
            )}
            <div className="flex flex-wrap gap-2">
              <Button type="submit" disabled={busy || !model} data-testid="pg-send">
                {busy ? t('Sending…') : t('Send')}
              </Button>
              {busy && (
                <Button variant="secondary" onClick={() => abort.current?.abort()}>
                  {t('Stop')}
                </Button>
              )}
            </div>
          </form>
        </section>
        {snippets && (
          <section aria-label={t('Code')} className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:p-5">
            <div className="flex flex-wrap items-center gap-2">
              <h2 className="mr-auto text-sm font-semibold text-slate-900">{lastBody ? t('This request as code') : t('The next request as code')}</h2>
              <span data-testid="pg-copy-curl">
                <CopyButton value={snippets.curl} label={t('Copy as curl')} />
              </span>
              <span data-testid="pg-copy-python">
                <CopyButton value={snippets.python} label={t('Copy as Python')} />
              </span>
              <span data-testid="pg-copy-typescript">
                <CopyButton value={snippets.typescript} label={t('Copy as TypeScript')} />
              </span>
            </div>
            <p className="text-xs text-slate-500">{t('Set GATEWAY_API_KEY to one of your API keys to run it.')}</p>
            <details>
              <summary className="cursor-pointer text-sm text-slate-700">{t('Show code')}</summary>
              <div className="mt-2">
                <CodeTabs
                  tabs={[
                    { id: 'curl', label: 'curl', code: snippets.curl },
                    { id: 'python', label: 'Python', code: snippets.python },
                    { id: 'typescript', label: 'TypeScript', code: snippets.typescript },
                  ]}
                />
              </div>
            </details>
          </section>
        )}
      </div>
    </div>
  );
}

function FieldWithError({ label, id, error, children }: { label: string; id: string; error?: string; children: React.ReactNode }) {
  return (
    <Field label={label} htmlFor={id}>
      {children}
      {error && (
        <p id={`${id}-error`} className="text-xs text-red-700" data-testid={`${id}-error`}>
          {error}
        </p>
      )}
    </Field>
  );
}

/** A reply's cost (the shared money formatter, every digit), latency, model, provider and request id. */
function TurnFacts({ meta, t }: { meta: TurnMeta; t: Translate }) {
  return (
    <dl className="mt-2 flex flex-wrap gap-x-4 gap-y-1 border-t border-slate-200 pt-2 text-xs text-slate-600">
      <div className="flex gap-1">
        <dt>{t('Cost')}</dt>
        <dd className="tabular-nums text-slate-900" data-testid="pg-turn-cost">
          {meta.costUsd ? formatMoneyText(meta.costUsd, 'USD') : '—'}
        </dd>
      </div>
      <div className="flex gap-1">
        <dt>{t('Latency')}</dt>
        <dd className="tabular-nums text-slate-900" data-testid="pg-turn-latency">
          {meta.totalMs !== null ? `${meta.totalMs} ms` : '—'}
          {meta.firstTokenMs !== null && meta.firstTokenMs !== meta.totalMs ? ` (${t('first token after')} ${meta.firstTokenMs} ms)` : ''}
        </dd>
      </div>
      {meta.model && (
        <div className="flex gap-1">
          <dt>{t('Model')}</dt>
          <dd className="text-slate-900">{meta.model}</dd>
        </div>
      )}
      {meta.provider && (
        <div className="flex gap-1">
          <dt>{t('Provider')}</dt>
          <dd className="text-slate-900">{meta.provider}</dd>
        </div>
      )}
      {meta.requestId && (
        <div className="flex min-w-0 gap-1">
          <dt>{t('Request id')}</dt>
          <dd className="break-all font-mono text-slate-900" data-testid="pg-turn-request-id">
            {meta.requestId}
          </dd>
        </div>
      )}
    </dl>
  );
}

'use client';

import { useT } from '@/lib/i18n/client';
import type { Phrase } from '@/lib/i18n/translate';
import { useRef, useState, type FormEvent } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Field, Input, Select } from '@/components/ui/input';
import { formatMoneyText } from '@/lib/format';

interface Result {
  status: number;
  requestId: string | null;
  model: string | null;
  provider: string | null;
  costUsd: string | null;
  costCny: string | null;
  serverLatencyMs: string | null;
  firstByteMs: number | null;
  totalMs: number | null;
}

const headerOf = (res: Response, name: string) => res.headers.get(name);

/** An exact decimal from the gateway shown like every other figure; none yet as a dash. */
const money = (value: string | null, currency: 'USD' | 'CNY'): string => (value ? formatMoneyText(value, currency) : '—');

/** The label users are shown for the channel a reply names ('none': no channel answered). */
function providerOf(name: string | null, providers: Record<string, string>): string | null {
  if (name === null || name === 'none') return null;
  return providers[name] ?? 'Upstream provider';
}

/**
 * Sends one chat request with a key the user pastes, as any client would, and shows the reply, the
 * cost headers and the latency. `providers`: each channel's public label by name (the reply header
 * carries the name).
 */
export function Playground({ models, providers = {} }: { models: string[]; providers?: Record<string, string> }) {
  const t = useT();
  const [key, setKey] = useState('');
  const [model, setModel] = useState(models[0] ?? '');
  const [prompt, setPrompt] = useState(() => t('Say hello in one short sentence.'));
  const [stream, setStream] = useState(true);
  const [busy, setBusy] = useState(false);
  const [reply, setReply] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const abort = useRef<AbortController | null>(null);

  async function send(e: FormEvent) {
    e.preventDefault();
    if (!key.trim()) {
      setError(t('Paste one of your API keys first: the playground calls the API exactly as your code would.'));
      return;
    }
    setBusy(true);
    setError(null);
    setReply('');
    setResult(null);
    const controller = new AbortController();
    abort.current = controller;
    const started = performance.now();
    try {
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${key.trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: prompt }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }),
      });
      const base: Result = {
        status: res.status,
        requestId: headerOf(res, 'x-request-id'),
        model: headerOf(res, 'x-service-model-id'),
        provider: providerOf(headerOf(res, 'x-service-provider'), providers),
        costUsd: headerOf(res, 'x-service-cost-usd'),
        costCny: headerOf(res, 'x-service-cost-cny'),
        serverLatencyMs: headerOf(res, 'x-service-latency-ms'),
        firstByteMs: Math.round(performance.now() - started),
        totalMs: null,
      };
      setResult(base);
      if (!res.ok) {
        const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
        setError(`${res.status}: ${body?.error?.message ?? res.statusText}`);
        setResult({ ...base, totalMs: Math.round(performance.now() - started) });
        return;
      }
      if (!stream) {
        const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
        setReply(body.choices?.[0]?.message?.content ?? '');
        setResult({ ...base, totalMs: Math.round(performance.now() - started) });
        return;
      }
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let text = '';
      let firstToken: number | null = null;
      let final = base;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          const chunk = JSON.parse(line.slice(6)) as {
            choices?: { delta?: { content?: string } }[];
            usage?: { cost_usd?: number | string; cost_cny?: number | string };
            error?: { message?: string };
          };
          if (chunk.error) setError(chunk.error.message ?? t('The stream ended with an error.'));
          const piece = chunk.choices?.[0]?.delta?.content;
          if (piece) {
            if (firstToken === null) firstToken = Math.round(performance.now() - started);
            text += piece;
            setReply(text);
          }
          if (chunk.usage?.cost_usd !== undefined) {
            final = {
              ...final,
              costUsd: String(chunk.usage.cost_usd),
              costCny: chunk.usage.cost_cny !== undefined ? String(chunk.usage.cost_cny) : final.costCny,
            };
          }
        }
      }
      setResult({ ...final, firstByteMs: firstToken ?? final.firstByteMs, totalMs: Math.round(performance.now() - started) });
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(t('Network error: the request did not complete.'));
    } finally {
      setBusy(false);
      abort.current = null;
    }
  }

  return (
    <div className="grid grid-cols-1 gap-4 lg:grid-cols-2 [&>*]:min-w-0">
      <form onSubmit={send} className="space-y-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:p-5" noValidate>
        <Field label={t('API key')} htmlFor="pg-key" hint={t('Kept in this page only; never stored. Create one on the Keys page.')}>
          <Input
            id="pg-key"
            type="password"
            autoComplete="off"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            placeholder="sk-gw-…"
            data-testid="pg-key"
          />
        </Field>
        <Field label={t('Model')} htmlFor="pg-model">
          <Select id="pg-model" value={model} onChange={(e) => setModel(e.target.value)} data-testid="pg-model">
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </Select>
        </Field>
        <Field label={t('Message')} htmlFor="pg-prompt">
          <textarea
            id="pg-prompt"
            rows={4}
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/20"
          />
        </Field>
        <label className="flex items-center gap-2 text-sm text-slate-700">
          <input type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} className="h-4 w-4" /> {t('Stream the reply')}
        </label>
        <div className="flex gap-2">
          <Button type="submit" disabled={busy} data-testid="pg-send">
            {busy ? t('Sending…') : t('Send')}
          </Button>
          {busy && (
            <Button variant="secondary" onClick={() => abort.current?.abort()}>
              {t('Stop')}
            </Button>
          )}
        </div>
      </form>
      <div className="space-y-4">
        {error && (
          <Alert tone="error" data-testid="pg-error">
            {error}
          </Alert>
        )}
        <div className="min-h-32 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:p-5">
          <h2 className="text-sm font-semibold text-slate-900">{t('Reply')}</h2>
          <p className="mt-2 whitespace-pre-wrap break-words text-sm text-slate-800" data-testid="pg-reply" aria-live="polite">
            {reply || <span className="text-slate-500">{busy ? t('Waiting for the first token…') : t('Nothing sent yet.')}</span>}
          </p>
        </div>
        {result && (
          <dl className="grid grid-cols-2 gap-x-4 gap-y-2 rounded-lg border border-slate-200 bg-white p-4 text-sm shadow-sm sm:p-5" data-testid="pg-result">
            {(
              [
                ['HTTP status', String(result.status)],
                ['Model served', result.model ?? '—'],
                ['Provider', result.provider ?? '—'],
                ['Cost (USD)', money(result.costUsd, 'USD')],
                ['Cost (CNY)', money(result.costCny, 'CNY')],
                ['Gateway latency', result.serverLatencyMs ? `${result.serverLatencyMs} ms` : '—'],
                [stream ? 'First token after' : 'Answer after', result.firstByteMs !== null ? `${result.firstByteMs} ms` : '—'],
                ['Total', result.totalMs !== null ? `${result.totalMs} ms` : '…'],
                ['Request id', result.requestId ?? '—'],
              ] as [Phrase, string][]
            ).map(([label, value]) => (
              <div key={label} className="min-w-0">
                <dt className="text-xs text-slate-600">{t(label)}</dt>
                <dd className="break-all tabular-nums text-slate-900" data-testid={`pg-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>
                  {value}
                </dd>
              </div>
            ))}
          </dl>
        )}
      </div>
    </div>
  );
}

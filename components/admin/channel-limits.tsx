'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { Field, Input } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';
import { useT } from '@/lib/i18n/client';
import { coded, translator, type Phrase, type Translate } from '@/lib/i18n/translate';

/** One limit as the console shows it (lib/admin/stats.ts ChannelLimit). */
export interface LimitView {
  limit: number | null;
  config: number | null;
  override: number | null;
  current: number | null;
}

type LimitName = 'concurrency' | 'tpm';

/** The bounds the server checks (lib/channels/overrides.ts CHANNEL_LIMIT_BOUNDS). */
const BOUNDS: Record<LimitName, { min: number; max: number }> = { concurrency: { min: 1, max: 100_000 }, tpm: { min: 1, max: 1_000_000_000 } };
const LABELS: Record<LimitName, Phrase> = { concurrency: 'Concurrency', tpm: 'Tokens per minute' };

/** The field's value to send: a whole number within its bounds, null when empty (the operator config's), or the field's error. */
export function parseLimit(field: LimitName, text: string, t: Translate = translator('en')): { value: number | null } | { error: string } {
  const trimmed = text.trim().replace(/[,\s_]/g, '');
  if (trimmed === '') return { value: null };
  const n = Number(trimmed);
  const { min, max } = BOUNDS[field];
  if (!/^\d+$/.test(trimmed) || n < min || n > max)
    return { error: coded(t, { message_code: 'admin.channel_limit', params: { field: t(LABELS[field]), min, max } }) };
  return { value: n };
}

const shown = (n: number | null, t: Translate) => (n === null ? t('no limit') : n.toLocaleString('en-US'));

/**
 * The confirmation a change asks for when it tightens a limit (a lower one, or one where there was
 * none): requests beyond it move to the model's other channels, or get a 429 naming this channel.
 * Null when the change only loosens or keeps the limits.
 */
export function tightenQuestion(
  name: string,
  changes: { field: LimitName; from: number | null; to: number | null; current: number | null }[],
  t: Translate = translator('en'),
): string | null {
  const tighter = changes.filter((c) => c.to !== null && (c.from === null || c.to < c.from));
  if (tighter.length === 0) return null;
  const lines = tighter.map((c) =>
    t('{field}: {from} → {to} (now {current})', {
      field: t(LABELS[c.field]),
      from: shown(c.from, t),
      to: shown(c.to, t),
      current: (c.current ?? 0).toLocaleString('en-US'),
    }),
  );
  return t(
    'Tighten the limits of channel "{name}" on every instance? {changes}. Requests beyond them go to the other channels of their model, or get a 429 naming this channel when none has room.',
    {
      name,
      changes: lines.join('; '),
    },
  );
}

export function ChannelLimits({ name, concurrency, tpm }: { name: string; concurrency: LimitView; tpm: LimitView }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const views: Record<LimitName, LimitView> = { concurrency, tpm };
  const [text, setText] = useState<Record<LimitName, string>>({
    concurrency: concurrency.override === null ? '' : String(concurrency.override),
    tpm: tpm.override === null ? '' : String(tpm.override),
  });
  const [errors, setErrors] = useState<Partial<Record<LimitName, string>>>({});
  const id = (field: LimitName) => `limit-${field}-${name}`;

  async function save(next: Record<LimitName, string>) {
    const parsed = { concurrency: parseLimit('concurrency', next.concurrency, t), tpm: parseLimit('tpm', next.tpm, t) };
    const found: Partial<Record<LimitName, string>> = {};
    for (const field of ['concurrency', 'tpm'] as const) {
      const p = parsed[field];
      if ('error' in p) found[field] = p.error;
    }
    setErrors(found);
    if (Object.keys(found).length) return;
    const body = { concurrency: (parsed.concurrency as { value: number | null }).value, tpm: (parsed.tpm as { value: number | null }).value };
    // What each limit becomes: the override, else (empty) the operator config's.
    const question = tightenQuestion(
      name,
      (['concurrency', 'tpm'] as const).map((field) => ({
        field,
        from: views[field].limit,
        to: body[field] ?? views[field].config,
        current: views[field].current,
      })),
      t,
    );
    if (question && !confirm(question)) return;
    await send(`/api/admin/channels/${encodeURIComponent(name)}`, 'POST', body);
  }

  return (
    <form
      className="mt-3 space-y-3"
      data-testid={`channel-limits-form-${name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save(text);
      }}
      noValidate
    >
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        {(['concurrency', 'tpm'] as const).map((field) => (
          <Field
            key={field}
            label={t(LABELS[field])}
            htmlFor={id(field)}
            hint={
              views[field].config === null
                ? t('Config: no limit. Empty: the config.')
                : t('Config: {n}. Empty: the config.', { n: shown(views[field].config, t) })
            }
            error={errors[field]}
          >
            <Input
              id={id(field)}
              name={field}
              inputMode="numeric"
              autoComplete="off"
              value={text[field]}
              placeholder={views[field].config === null ? t('no limit') : String(views[field].config)}
              aria-invalid={errors[field] ? true : undefined}
              aria-describedby={errors[field] ? `${id(field)}-error` : undefined}
              onChange={(e) => setText({ ...text, [field]: e.target.value })}
              data-testid={`limit-${field}`}
            />
          </Field>
        ))}
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" size="sm" disabled={busy} data-testid="save-limits">
          {t('Save limits')}
        </Button>
        {(concurrency.override !== null || tpm.override !== null) && (
          <Button
            type="button"
            size="sm"
            variant="ghost"
            disabled={busy}
            onClick={() => {
              const next = { concurrency: '', tpm: '' };
              setText(next);
              void save(next);
            }}
            data-testid="reset-limits"
          >
            {t('Use the config')}
          </Button>
        )}
        {error && (
          <span role="alert" className="text-xs text-red-700" data-testid="limits-error">
            {error}
          </span>
        )}
      </div>
    </form>
  );
}

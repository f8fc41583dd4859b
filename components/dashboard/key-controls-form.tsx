'use client';

import type { publicKeyWithControls } from '@/lib/keys/queries';
import { Field, Input, Select } from '@/components/ui/input';
import { ModelChecklist } from '@/components/dashboard/model-checklist';
import { Progress } from '@/components/ui/progress';
import { useT } from '@/lib/i18n/client';
import { formatCount, formatMoneyText } from '@/lib/format';
import { usdToPico } from '@/lib/money';
import { translator, type Translate } from '@/lib/i18n/translate';

// The per-key controls as form fields (create and edit), and the spend/budget cell of the key list.

export type KeyWithControlsJson = ReturnType<typeof publicKeyWithControls>;

/** The form's values: text as typed; empty means "no limit". */
export interface ControlValues {
  budget_usd: string;
  monthly_budget_usd: string;
  models: string[];
  rpm: string;
  /** Tokens per minute (input + output). */
  tpm: string;
  concurrency: string;
  allowed_ips: string;
  /** `datetime-local` text, in the viewer's own time zone (as every time on the dashboard). */
  expires_at: string;
  /** Region pin (cn, eu, us…); empty: the account's, else anywhere. */
  region: string;
  /** The key's project (docs/decisions/056); empty: none. Unset: not shown, not sent. */
  project_id?: string;
}

/** A project the key form offers (GET /api/projects). */
export interface ProjectOption {
  id: string;
  name: string;
}

export const EMPTY_CONTROLS: ControlValues = {
  budget_usd: '',
  monthly_budget_usd: '',
  models: [],
  rpm: '',
  tpm: '',
  concurrency: '',
  allowed_ips: '',
  expires_at: '',
  region: '',
  project_id: '',
};

export function valuesOf(k: KeyWithControlsJson): ControlValues {
  return {
    budget_usd: k.budget_usd ?? '',
    monthly_budget_usd: k.monthly_budget_usd ?? '',
    models: k.models,
    rpm: k.rpm === null ? '' : String(k.rpm),
    tpm: k.tpm === null ? '' : String(k.tpm),
    concurrency: k.concurrency === null ? '' : String(k.concurrency),
    allowed_ips: k.allowed_ips.join('\n'),
    expires_at: k.expires_at ? localInput(k.expires_at) : '',
    region: k.region ?? '',
    project_id: k.project_id ?? '',
  };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as `datetime-local` text in the browser's zone ("2026-12-01T08:00"). */
function localInput(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** `datetime-local` text (the browser's zone) as an ISO instant; text it cannot read is sent as typed, for the server's 400. */
function instantOf(local: string): string {
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? local : d.toISOString();
}

/**
 * The API body of the values (every field sent: an empty one clears it). Numbers the browser cannot
 * read are sent as typed, so the server's 400 names the field.
 */
export function bodyOf(v: ControlValues): Record<string, unknown> {
  const int = (s: string) => (s.trim() === '' ? null : /^\d+$/.test(s.trim()) ? Number(s.trim()) : s);
  return {
    budget_usd: v.budget_usd.trim() || null,
    monthly_budget_usd: v.monthly_budget_usd.trim() || null,
    models: v.models.length > 0 ? v.models : null,
    rpm: int(v.rpm),
    tpm: int(v.tpm),
    concurrency: int(v.concurrency),
    allowed_ips: v.allowed_ips.split(/[\s,]+/).filter(Boolean),
    expires_at: v.expires_at ? instantOf(v.expires_at) : null,
    region: v.region.trim() || null,
    ...(v.project_id === undefined ? {} : { project_id: v.project_id || null }),
  };
}

/** A typical request's cost (pico-USD as decimal text, 1,000 tokens in and out) on `model`. */
export interface BudgetGauge {
  model: string;
  picoPerRequest: string;
}

/** "≈ 1,234 requests of gpt-4o-mini at 1K tokens in and out" for a budget as typed; null when it is no amount. */
export function budgetAllows(budgetText: string, gauge: BudgetGauge | undefined, t: Translate): string | null {
  if (!gauge || !/^\d+(\.\d{1,12})?$/.test(budgetText.trim())) return null;
  const per = BigInt(gauge.picoPerRequest);
  if (per <= 0n) return null;
  const n = usdToPico(budgetText.trim()) / per;
  return t('≈ {n} requests of {model} at 1K tokens in and 1K out; a longer reply is cut to what is left.', { n: formatCount(Number(n)), model: gauge.model });
}

export function KeyControlsFields({
  idPrefix,
  values,
  onChange,
  models,
  gauge,
  errors = {},
  projects = [],
}: {
  idPrefix: string;
  values: ControlValues;
  onChange: (v: ControlValues) => void;
  models: string[];
  gauge?: BudgetGauge;
  /** The account's projects: a select when there are any. */
  projects?: ProjectOption[];
  /** The server's words for each bad field (API field name -> text). */
  errors?: Record<string, string>;
}) {
  const t = useT();
  const allows = (text: string, testId: string) => {
    const line = budgetAllows(text, gauge, t);
    return line ? (
      <p className="mt-1 text-xs text-slate-600" data-testid={testId}>
        {line}
      </p>
    ) : null;
  };
  const set = (patch: Partial<ControlValues>) => onChange({ ...values, ...patch });
  const id = (name: string) => `${idPrefix}-${name}`;
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      {projects.length > 0 && (
        <Field
          label={t('Project')}
          htmlFor={id('project')}
          error={errors.project_id}
          hint={t("The project's model list and monthly budget apply to the key too.")}
        >
          <Select
            id={id('project')}
            data-testid={id('project')}
            aria-invalid={errors.project_id ? true : undefined}
            value={values.project_id ?? ''}
            onChange={(e) => set({ project_id: e.target.value })}
          >
            <option value="">{t('No project')}</option>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </Select>
        </Field>
      )}
      <Field
        label={t('Lifetime budget (USD)')}
        htmlFor={id('budget')}
        error={errors.budget_usd}
        hint={t('Requests are refused with 402 once the key has spent this much.')}
      >
        <Input
          id={id('budget')}
          aria-invalid={errors.budget_usd ? true : undefined}
          aria-describedby={errors.budget_usd ? `${id('budget')}-error` : undefined}
          data-testid={id('budget')}
          inputMode="decimal"
          placeholder={t('No limit')}
          value={values.budget_usd}
          onChange={(e) => set({ budget_usd: e.target.value })}
        />
        {allows(values.budget_usd, id('budget-allows'))}
      </Field>
      <Field label={t('Monthly budget (USD)')} htmlFor={id('monthly')} error={errors.monthly_budget_usd} hint={t('Per calendar month, UTC.')}>
        <Input
          id={id('monthly')}
          aria-invalid={errors.monthly_budget_usd ? true : undefined}
          aria-describedby={errors.monthly_budget_usd ? `${id('monthly')}-error` : undefined}
          data-testid={id('monthly')}
          inputMode="decimal"
          placeholder={t('No limit')}
          value={values.monthly_budget_usd}
          onChange={(e) => set({ monthly_budget_usd: e.target.value })}
        />
        {allows(values.monthly_budget_usd, id('monthly-allows'))}
      </Field>
      <Field label={t('Requests per minute')} htmlFor={id('rpm')} error={errors.rpm} hint={t("On top of your tier's limits: the stricter wins.")}>
        <Input
          id={id('rpm')}
          aria-invalid={errors.rpm ? true : undefined}
          aria-describedby={errors.rpm ? `${id('rpm')}-error` : undefined}
          data-testid={id('rpm')}
          inputMode="numeric"
          placeholder={t('Tier limit')}
          value={values.rpm}
          onChange={(e) => set({ rpm: e.target.value })}
        />
      </Field>
      <Field
        label={t('Tokens per minute')}
        htmlFor={id('tpm')}
        error={errors.tpm}
        hint={t('Input and output tokens. A request reserves its prompt and its max_tokens, and gets back what it did not use.')}
      >
        <Input
          id={id('tpm')}
          aria-invalid={errors.tpm ? true : undefined}
          aria-describedby={errors.tpm ? `${id('tpm')}-error` : undefined}
          data-testid={id('tpm')}
          inputMode="numeric"
          placeholder={t('No limit')}
          value={values.tpm}
          onChange={(e) => set({ tpm: e.target.value })}
        />
      </Field>
      <Field label={t('Concurrent requests')} htmlFor={id('concurrency')} error={errors.concurrency}>
        <Input
          id={id('concurrency')}
          aria-invalid={errors.concurrency ? true : undefined}
          aria-describedby={errors.concurrency ? `${id('concurrency')}-error` : undefined}
          data-testid={id('concurrency')}
          inputMode="numeric"
          placeholder={t('Tier limit')}
          value={values.concurrency}
          onChange={(e) => set({ concurrency: e.target.value })}
        />
      </Field>
      <Field
        label={t('Allowed IP ranges')}
        htmlFor={id('ips')}
        error={errors.allowed_ips}
        hint={t('IPv4 or IPv6 addresses or CIDR ranges, one per line. Empty: any address.')}
      >
        <textarea
          id={id('ips')}
          aria-invalid={errors.allowed_ips ? true : undefined}
          aria-describedby={errors.allowed_ips ? `${id('ips')}-error` : undefined}
          data-testid={id('ips')}
          rows={3}
          className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-sm text-slate-900 shadow-sm placeholder:text-slate-500 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/20"
          placeholder={'203.0.113.0/24\n2001:db8::/32'}
          value={values.allowed_ips}
          onChange={(e) => set({ allowed_ips: e.target.value })}
        />
      </Field>
      <Field label={t('Expires')} htmlFor={id('expires')} error={errors.expires_at} hint={t('After this the key answers 401 key_expired. Empty: never.')}>
        <Input
          id={id('expires')}
          aria-invalid={errors.expires_at ? true : undefined}
          aria-describedby={errors.expires_at ? `${id('expires')}-error` : undefined}
          data-testid={id('expires')}
          type="datetime-local"
          value={values.expires_at}
          onChange={(e) => set({ expires_at: e.target.value })}
        />
      </Field>
      <Field label={t('Region')} htmlFor={id('region')} error={errors.region} hint={t('Served only by channels of this region (cn, eu, us…). Empty: any.')}>
        <Input
          id={id('region')}
          aria-invalid={errors.region ? true : undefined}
          aria-describedby={errors.region ? `${id('region')}-error` : undefined}
          data-testid={id('region')}
          value={values.region}
          maxLength={32}
          onChange={(e) => set({ region: e.target.value })}
        />
      </Field>
      <ModelChecklist
        id={id('models')}
        hint={t('None ticked: every model your tier allows. service-auto picks only among the ticked ones.')}
        models={models}
        selected={values.models}
        error={errors.models}
        onChange={(selected) => set({ models: selected })}
      />
    </div>
  );
}

const usd = (s: string) => formatMoneyText(s, 'USD');
const cny = (s: string) => formatMoneyText(s, 'CNY');

/** Spend this month and in total (USD and CNY), and the budget used as a bar. */
export function KeySpend({ k }: { k: KeyWithControlsJson }) {
  const t = useT();
  const bars: { label: string; spent: string; cap: string }[] = [];
  if (k.monthly_budget_usd) bars.push({ label: t('Monthly budget ({month})', { month: k.spend.month }), spent: k.spend.month_usd, cap: k.monthly_budget_usd });
  if (k.budget_usd) bars.push({ label: t('Lifetime budget'), spent: k.spend.total_usd, cap: k.budget_usd });
  return (
    <div className="min-w-40 space-y-1 text-xs" data-testid="key-spend">
      <div className="tabular-nums text-slate-700">
        {t('This month')} {usd(k.spend.month_usd)} <span className="text-slate-500">({cny(k.spend.month_cny)})</span>
      </div>
      <div className="tabular-nums text-slate-500">
        {t('Total')} {usd(k.spend.total_usd)} <span className="text-slate-500">({cny(k.spend.total_cny)})</span>
      </div>
      {bars.map((b) => (
        <div key={b.label}>
          <div className="flex justify-between text-slate-500">
            <span>{b.label}</span>
            <span className="tabular-nums">
              {usd(b.spent)} / {usd(b.cap)}
            </span>
          </div>
          <Progress value={Number(b.spent) / Number(b.cap)} label={t('{label} used', { label: b.label })} />
        </div>
      ))}
    </div>
  );
}

/** A short summary of the key's restrictions for the list. */
export function controlsSummary(k: KeyWithControlsJson, t: Translate = translator('en')): string[] {
  const out: string[] = [];
  if (k.models.length) out.push(k.models.length === 1 ? t('1 model') : t('{n} models', { n: k.models.length }));
  if (k.rpm !== null) out.push(t('{n} rpm', { n: k.rpm }));
  if (k.tpm !== null) out.push(t('{n} tokens/min', { n: k.tpm }));
  if (k.concurrency !== null) out.push(t('{n} concurrent', { n: k.concurrency }));
  if (k.allowed_ips.length) out.push(k.allowed_ips.length === 1 ? t('1 IP range') : t('{n} IP ranges', { n: k.allowed_ips.length }));
  if (k.expires_at) out.push(t('expires {at}', { at: localInput(k.expires_at).replace('T', ' ') }));
  return out;
}

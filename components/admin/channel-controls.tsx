'use client';

import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { useAdminAction } from './use-admin-action';
import { useT } from '@/lib/i18n/client';
import { translator, type Translate } from '@/lib/i18n/translate';

interface TestResult {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  model: string | null;
  detail: string;
}

/** The confirmation a Disable click asks for, naming what it does to traffic. */
export function disableChannelQuestion(name: string, strandedModels: string[], t: Translate = translator('en')): string {
  const models = strandedModels.join(', ');
  const effect = strandedModels.length
    ? strandedModels.length === 1
      ? t('No other enabled channel serves {models}: every request for it will fail ("All upstream channels failed") until you enable this channel again.', {
          models,
        })
      : t('No other enabled channel serves {models}: every request for them will fail ("All upstream channels failed") until you enable this channel again.', {
          models,
        })
    : t('Its traffic moves to the other enabled channels of its models.');
  return t('Disable channel "{name}" on every instance? {effect}', { name, effect });
}

export function ChannelControls({
  name,
  disabled,
  weight,
  strandedModels = [],
}: {
  name: string;
  disabled: boolean;
  weight: number | null;
  strandedModels?: string[];
}) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  const [weightText, setWeightText] = useState(weight === null ? '' : String(weight));
  const [test, setTest] = useState<TestResult | null>(null);
  const url = `/api/admin/channels/${encodeURIComponent(name)}`;

  return (
    <div className="flex flex-wrap items-center gap-2" data-testid={`channel-controls-${name}`}>
      <Button
        size="sm"
        variant={disabled ? 'primary' : 'danger'}
        disabled={busy}
        onClick={() => (disabled || confirm(disableChannelQuestion(name, strandedModels, t))) && send(url, 'POST', { disabled: !disabled })}
        data-testid={disabled ? 'enable' : 'disable'}
      >
        {disabled ? t('Enable') : t('Disable')}
      </Button>
      <div className="w-20">
        <Input
          className="h-8"
          inputMode="numeric"
          placeholder={t('weight')}
          value={weightText}
          onChange={(e) => setWeightText(e.target.value)}
          aria-label={t('Weight override for {name}', { name })}
          data-testid="weight"
        />
      </div>
      <Button
        size="sm"
        variant="secondary"
        disabled={busy || (weightText.trim() !== '' && !/^\d{1,7}$/.test(weightText.trim()))}
        onClick={() => send(url, 'POST', { weight: weightText.trim() === '' ? null : Number(weightText.trim()) })}
        data-testid="set-weight"
      >
        {t('Set weight')}
      </Button>
      <Button
        size="sm"
        variant="ghost"
        disabled={busy}
        onClick={async () => {
          setTest(null);
          setTest(await send<TestResult>(`${url}/test`, 'POST'));
        }}
        data-testid="test"
      >
        {t('Test')}
      </Button>
      {test && (
        <span className={test.ok ? 'text-xs text-emerald-700' : 'text-xs text-red-700'} data-testid="test-result">
          {test.ok ? t('OK') : t('Failed')} · {test.detail} · {test.latencyMs} ms{test.model ? ` · ${test.model}` : ''}
        </span>
      )}
      {error && <span className="text-xs text-red-700">{error}</span>}
    </div>
  );
}

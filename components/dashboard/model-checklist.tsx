'use client';

import { FieldError } from '@/components/ui/input';
import { useT } from '@/lib/i18n/client';

/** The "Allowed models" tick list of the key and project forms: none ticked means every model. */
export function ModelChecklist({
  id,
  hint,
  models,
  selected,
  error,
  onChange,
}: {
  /** The list's id and test id; its error is `${id}-error`. */
  id: string;
  hint: string;
  models: string[];
  selected: string[];
  error?: string;
  onChange: (selected: string[]) => void;
}) {
  const t = useT();
  return (
    <fieldset className="sm:col-span-2">
      <legend className="text-sm font-medium text-slate-700">{t('Allowed models')}</legend>
      <p className="text-xs text-slate-500">{hint}</p>
      <FieldError id={id} error={error} />
      <div className="mt-2 grid max-h-40 gap-1 overflow-y-auto sm:grid-cols-2" data-testid={id}>
        {models.map((m) => (
          <label key={m} className="flex items-center gap-2 text-sm text-slate-700">
            <input
              type="checkbox"
              value={m}
              checked={selected.includes(m)}
              onChange={(e) => onChange(e.target.checked ? [...selected, m] : selected.filter((x) => x !== m))}
            />
            <span className="font-mono text-xs">{m}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}

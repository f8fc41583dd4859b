'use client';

import { useT } from '@/lib/i18n/client';
import { useEffect, useState } from 'react';
import { Button, type ButtonStyle } from './button';

/** Copies `value` to the clipboard and says so for two seconds. */
export function CopyButton({ value, label, variant = 'secondary', size = 'sm', className }: { value: string; label?: string } & ButtonStyle) {
  const t = useT();
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
  }

  return (
    <Button variant={variant} size={size} className={className} onClick={copy} aria-live="polite">
      {state === 'copied' ? t('Copied') : state === 'failed' ? t('Select and copy') : (label ?? t('Copy'))}
    </Button>
  );
}

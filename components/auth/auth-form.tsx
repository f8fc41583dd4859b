'use client';

import { useState, type FormEvent, type ReactNode } from 'react';
import { Alert } from '@/components/ui/alert';
import { useLocale, useT } from '@/lib/i18n/client';
import { apiErrorText, type ApiErrorJson } from '@/lib/i18n/codes';
import { ruleProblem } from '@/lib/i18n/translate';

// What the sign-in, sign-up and password-reset forms share: the form with its error above the
// fields, and (for the reset forms) a rule-checked JSON POST. The link line under them: auth-link.tsx.

export function AuthForm({
  onSubmit,
  error,
  noValidate,
  children,
}: {
  onSubmit: (e: FormEvent) => void;
  error: ReactNode;
  noValidate?: boolean;
  children: ReactNode;
}) {
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate={noValidate}>
      {error && (
        <Alert tone="error" data-testid="auth-error">
          {error}
        </Alert>
      )}
      {children}
    </form>
  );
}

/**
 * A form's POST: the server's own rule (password-rules) checked here first, then the JSON body sent;
 * a refusal shown in the reader's language. Answers whether `accepted` took the answer; the form
 * then stays busy, as the page moves on.
 */
export function useAuthRequest() {
  const t = useT();
  const locale = useLocale();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function send(request: { problem: string | null; url: string; body: unknown; accepted: (res: Response) => boolean; fallback: string }) {
    setError(null);
    if (request.problem) {
      setError(ruleProblem(request.problem, t));
      return false;
    }
    setBusy(true);
    try {
      const res = await fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request.body),
      });
      if (request.accepted(res)) return true;
      const body = (await res.json().catch(() => ({}))) as ApiErrorJson;
      setError(apiErrorText(locale, body, res.status, request.fallback));
    } catch {
      setError(request.fallback);
    }
    setBusy(false);
    return false;
  }

  return { busy, error, send };
}

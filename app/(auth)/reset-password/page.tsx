import type { Metadata } from 'next';
import { AuthFooterLink } from '@/components/auth/auth-link';
import { serverT } from '@/lib/i18n/server';
import { checkResetToken } from '@/lib/auth/password-reset';
import { Alert } from '@/components/ui/alert';
import { ResetPasswordForm } from '@/components/auth/reset-password-form';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  // The token is in this page's URL: no Referer carries it anywhere.
  return { title: `${t('Set a new password')} · Model Gateway`, referrer: 'no-referrer' };
}

export default async function ResetPasswordPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const token = typeof sp.token === 'string' ? sp.token : '';
  // Checked before the form is shown: a used or expired link says so at once, not after typing a password.
  const state = await checkResetToken(token);
  const t = await serverT();
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t('Set a new password')}</h1>
      {state.ok ? (
        <>
          <p className="mb-6 mt-1 text-sm text-slate-600">{t('For {email}. Every other session of the account is signed out.', { email: state.email })}</p>
          <ResetPasswordForm token={token} email={state.email} />
        </>
      ) : (
        <div className="mt-4 space-y-4">
          <Alert tone="error" data-testid="reset-link-problem">
            {state.reason === 'expired'
              ? t('This reset link has expired. Ask for a new one.')
              : t('This reset link is not valid or was already used. Ask for a new one.')}
          </Alert>
          <AuthFooterLink href="/forgot-password">{t('Ask for a new link')}</AuthFooterLink>
        </div>
      )}
    </>
  );
}

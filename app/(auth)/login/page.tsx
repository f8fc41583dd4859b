import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { redirect } from 'next/navigation';
import { LoginForm } from '@/components/auth/login-form';
import { Alert } from '@/components/ui/alert';
import { safeCallbackPath, signedInAccountUser } from '@/lib/dashboard/session';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Log in')} · Model Gateway` };
}

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const callbackUrl = safeCallbackPath(sp.callbackUrl);
  // Already signed in: straight on to where the link was going.
  if (await signedInAccountUser()) redirect(callbackUrl);
  const { t } = await currentMessages();
  const tr = await serverT();
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t.auth.loginTitle}</h1>
      <p className="mb-6 mt-1 text-sm text-slate-600">{t.auth.loginLead}</p>
      {sp.reset === 'done' && (
        <Alert tone="success" className="mb-4" data-testid="reset-done">
          {tr('Your password was changed. Log in with the new one.')}
        </Alert>
      )}
      <LoginForm callbackUrl={callbackUrl} t={t.auth} />
    </>
  );
}

import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { redirect } from 'next/navigation';
import { RegisterForm } from '@/components/auth/register-form';
import { signedInAccountUser } from '@/lib/dashboard/session';
import { SsoButtons } from '@/components/auth/sso-buttons';
import { configuredSsoProviders } from '@/lib/auth/options';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Create an account')} · Model Gateway` };
}

export default async function RegisterPage() {
  if (await signedInAccountUser()) redirect('/dashboard');
  const { t } = await currentMessages();
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t.auth.registerTitle}</h1>
      <p className="mb-6 mt-1 text-sm text-slate-600">{t.auth.registerLead}</p>
      <RegisterForm t={t.auth} />
      <SsoButtons providers={configuredSsoProviders()} callbackUrl="/dashboard" />
    </>
  );
}

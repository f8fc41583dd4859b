import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { currentMessages } from '@/lib/i18n/server';
import { redirect } from 'next/navigation';
import { LoginForm } from '@/components/auth/login-form';
import { Alert } from '@/components/ui/alert';
import { safeCallbackPath, signedInAccountUser } from '@/lib/dashboard/session';
import { SsoButtons } from '@/components/auth/sso-buttons';
import { configuredSsoProviders } from '@/lib/auth/options';
import type { Translate } from '@/lib/i18n/translate';

/**
 * What went wrong when an SSO sign-in came back here: lib/auth/sso.ts's refusals (`Sso…`) and
 * next-auth's own errors (a state or nonce that did not match, a cancelled consent, ...).
 */
function ssoErrorText(error: string | string[] | undefined, t: Translate): string | null {
  const code = Array.isArray(error) ? error[0] : error;
  if (!code || code === 'CredentialsSignin' || code === 'SessionRequired') return null;
  if (code === 'SsoEmailUnverified')
    return t(
      'Your identity provider has not verified this email address, so it cannot sign in here or be linked to an account. Verify the address with your provider, or ask your administrator.',
    );
  if (code === 'SsoSuspended') return t('This account is suspended. Contact support to restore access.');
  if (code === 'SsoNotAllowed') return t('This identity cannot sign in to this account.');
  return t('Sign-in through your identity provider failed or was cancelled. Try again.');
}

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
  const ssoError = ssoErrorText(sp.error, tr);
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t.auth.loginTitle}</h1>
      <p className="mb-6 mt-1 text-sm text-slate-600">{t.auth.loginLead}</p>
      {sp.reset === 'done' && (
        <Alert tone="success" className="mb-4" data-testid="reset-done">
          {tr('Your password was changed. Log in with the new one.')}
        </Alert>
      )}
      {ssoError && (
        <Alert tone="error" className="mb-4" data-testid="sso-error">
          {ssoError}
        </Alert>
      )}
      <LoginForm callbackUrl={callbackUrl} t={t.auth} />
      <SsoButtons providers={configuredSsoProviders()} callbackUrl={callbackUrl} />
    </>
  );
}

import type { Metadata } from 'next';
import { AuthFooterLink } from '@/components/auth/auth-link';
import { serverT } from '@/lib/i18n/server';
import { mailConfigured } from '@/lib/mail/transport';
import { Alert } from '@/components/ui/alert';
import { ForgotPasswordForm } from '@/components/auth/forgot-password-form';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Forgot your password?')} · Model Gateway` };
}

export default async function ForgotPasswordPage() {
  const t = await serverT();
  const mail = mailConfigured();
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t('Forgot your password?')}</h1>
      {mail ? (
        <>
          <p className="mb-6 mt-1 text-sm text-slate-600">{t('Enter the email of your account and we will mail you a link to set a new password.')}</p>
          <ForgotPasswordForm />
        </>
      ) : (
        <div className="mt-4 space-y-4">
          {/* Without SMTP no link can reach anyone: say who can help instead of a form that could only fail. */}
          <Alert tone="info" data-testid="mail-not-configured">
            {t('Mail is not set up on this gateway, so no reset link can be sent. Ask its operator to set a new password for your account.')}
          </Alert>
          <AuthFooterLink href="/login">{t('Back to log in')}</AuthFooterLink>
        </div>
      )}
    </>
  );
}

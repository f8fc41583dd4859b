import type { Metadata } from 'next';
import { LoginForm } from '@/components/auth/login-form';

export const metadata: Metadata = { title: 'Log in · Model Gateway' };

/** Only same-site paths, so the login page cannot be used to bounce users elsewhere. */
function safeCallback(value: string | string[] | undefined): string {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/\\') ? v : '/dashboard';
}

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">Log in</h1>
      <p className="mb-6 mt-1 text-sm text-slate-500">Manage keys, usage and billing.</p>
      <LoginForm callbackUrl={safeCallback(sp.callbackUrl)} />
    </>
  );
}

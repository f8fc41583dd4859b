import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { RegisterForm } from '@/components/auth/register-form';
import { signedInAccountUser } from '@/lib/dashboard/session';

export const metadata: Metadata = { title: 'Create an account · Model Gateway' };

export default async function RegisterPage() {
  if (await signedInAccountUser()) redirect('/dashboard');
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">Create an account</h1>
      <p className="mb-6 mt-1 text-sm text-slate-600">Get an API key for every model behind one endpoint.</p>
      <RegisterForm />
    </>
  );
}

import type { Metadata } from 'next';
import { RegisterForm } from '@/components/auth/register-form';

export const metadata: Metadata = { title: 'Create an account · Model Gateway' };

export default function RegisterPage() {
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">Create an account</h1>
      <p className="mb-6 mt-1 text-sm text-slate-500">Get an API key for every model behind one endpoint.</p>
      <RegisterForm />
    </>
  );
}

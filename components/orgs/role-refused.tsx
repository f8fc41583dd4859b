import Link from 'next/link';
import { buttonClass } from '@/components/ui/button';
import { serverT } from '@/lib/i18n/server';
import type { OrgRole } from '@/lib/orgs/roles';
import { roleLabel } from '@/lib/orgs/labels';

// What a dashboard page shows instead of itself when the person's role in the selected organization
// may not see it (lib/orgs/roles.ts pageAllowed). The API would refuse the page's data anyway.
export async function RoleRefused({ role, orgName }: { role: OrgRole; orgName: string | null }) {
  const t = await serverT();
  return (
    <section className="mx-auto max-w-md py-16 text-center" data-testid="role-refused">
      <h1 className="text-2xl font-semibold text-slate-900">{t('Your role cannot see this page')}</h1>
      <p className="mt-2 text-sm text-slate-600">
        {t('In {org} you are {role}. Ask an owner or admin of the organization if you need it.', {
          org: orgName ?? t('this organization'),
          role: roleLabel(role, t),
        })}
      </p>
      <Link href="/dashboard" className={buttonClass({ variant: 'secondary', className: 'mt-6' })}>
        {t('Back to the overview')}
      </Link>
    </section>
  );
}

import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { serverT } from '@/lib/i18n/server';
import { requireOperator } from '@/lib/admin/guard';
import { consoleSsoDomains, consoleSsoProviders } from '@/lib/admin/console';
import { ReleaseSsoDomainButton } from '@/components/admin/sso-domain-release';
import { Badge } from '@/components/ui/badge';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CopyButton } from '@/components/ui/copy-button';
import { PageHeader } from '@/components/ui/page-header';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Single sign-on')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

// Read-only as to the providers: the environment configures them (docs/decisions/052).
export default async function AdminSsoPage() {
  await requireOperator();
  const [t, h, domains] = await Promise.all([serverT(), headers(), consoleSsoDomains()]);
  const providers = await consoleSsoProviders({ headers: h });
  return (
    <>
      <PageHeader title={t('Single sign-on')} description={t('Providers are set in the environment (OIDC_*, GITHUB_*, GOOGLE_*); secrets are never shown.')} />
      <Card>
        <CardHeader title={t('Providers')} />
        <CardBody>
          <ul className="divide-y divide-slate-100">
            {providers.map((p) => (
              <li key={p.id} className="space-y-1 py-3 text-sm" data-testid={`sso-provider-${p.id}`}>
                <p className="flex flex-wrap items-center gap-2 font-medium text-slate-800">
                  {p.name} <span className="font-mono text-xs text-slate-500">{p.id}</span>
                  <Badge tone={p.enabled ? 'green' : 'neutral'}>{p.enabled ? t('enabled') : t('not configured')}</Badge>
                </p>
                {p.issuer && (
                  <p className="break-all text-slate-600">
                    {t('Issuer')}: <span className="font-mono">{p.issuer}</span>
                  </p>
                )}
                {p.client_id && (
                  <p className="break-all text-slate-600">
                    {t('Client ID')}: <span className="font-mono">{p.client_id}</span>
                  </p>
                )}
                <p className="flex flex-wrap items-center gap-2 break-all text-slate-600">
                  {t('Callback URL to register with the provider')}: <span className="font-mono">{p.callback_url}</span>
                  <CopyButton value={p.callback_url} />
                </p>
              </li>
            ))}
          </ul>
        </CardBody>
      </Card>
      <Card className="mt-6">
        <CardHeader
          title={t('SSO-required domains')}
          description={t('Password log-in is refused for addresses at these domains. Releasing one is written to the audit log.')}
        />
        <CardBody>
          {domains.length === 0 ? (
            <p className="text-sm text-slate-500">{t('No organization requires SSO.')}</p>
          ) : (
            <ul className="divide-y divide-slate-100">
              {domains.map((d) => (
                <li key={d.domain} className="flex flex-wrap items-center justify-between gap-2 py-2 text-sm" data-testid={`sso-domain-${d.domain}`}>
                  <span>
                    <span className="font-mono">{d.domain}</span> · {d.org_name ?? d.org_id}
                  </span>
                  <ReleaseSsoDomainButton domain={d.domain} org={d.org_name ?? d.org_id} />
                </li>
              ))}
            </ul>
          )}
        </CardBody>
      </Card>
    </>
  );
}

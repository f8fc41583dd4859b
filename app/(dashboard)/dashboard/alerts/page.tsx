import { currentLocale, serverT } from '@/lib/i18n/server';
import { renderMessage } from '@/lib/i18n/codes';
import type { Phrase } from '@/lib/i18n/translate';
import type { Metadata } from 'next';
import { requirePageAccount } from '@/lib/dashboard/session';
import { RoleRefused } from '@/components/orgs/role-refused';
import { apiAllowed } from '@/lib/orgs/roles';
import { getAlertSettings } from '@/lib/alerts/settings';
import { listAlertEvents, type PublicAlertEvent } from '@/lib/alerts/events';
import { PageHeader } from '@/components/ui/page-header';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import { AlertSettingsForm } from '@/components/dashboard/alert-settings-form';
import { DismissAlertButton } from '@/components/dashboard/dismiss-alert-button';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Alerts')} · Model Gateway` };
}

const deliveryTone: Record<PublicAlertEvent['delivery']['status'], BadgeTone> = { delivered: 'green', pending: 'amber', failed: 'red', not_sent: 'neutral' };
const deliveryLabel: Record<PublicAlertEvent['delivery']['status'], Phrase> = {
  delivered: 'delivered',
  pending: 'retrying',
  failed: 'failed',
  not_sent: 'no webhook',
};

export default async function AlertsPage() {
  const user = await requirePageAccount('/dashboard/alerts');
  if (!user.allowed) return <RoleRefused role={user.role} orgName={user.orgName} />;
  const [settings, events, t, locale] = await Promise.all([getAlertSettings(user.id), listAlertEvents(user.id), serverT(), currentLocale()]);
  return (
    <>
      <PageHeader title={t('Alerts')} description={t('Budget and balance alerts: shown here and above every dashboard page, and sent to your webhook.')} />
      <div className="grid gap-6 lg:grid-cols-[2fr_3fr]">
        <Card>
          <CardHeader title={t('Settings')} />
          <CardBody>
            {apiAllowed(user.role, 'PUT', '/api/alerts/settings') ? (
              <AlertSettingsForm initial={settings} />
            ) : (
              <p className="text-sm text-slate-600" data-testid="alerts-role-note">
                {t('Your role in this organization can read these settings but not change them.')}
              </p>
            )}
          </CardBody>
        </Card>
        <Card>
          <CardHeader title={t('Recent alerts')} />
          {events.length === 0 ? (
            <EmptyState title={t('No alerts yet')}>
              {settings.enabled ? t('They appear here when a threshold is crossed.') : t('Save the settings to turn alerts on.')}
            </EmptyState>
          ) : (
            <Table data-testid="alert-events">
              <THead>
                <Tr>
                  <Th>{t('When')}</Th>
                  <Th>{t('Alert')}</Th>
                  <Th>{t('Webhook')}</Th>
                  <Th />
                </Tr>
              </THead>
              <TBody>
                {events.map((e) => (
                  <Tr key={e.id} data-testid="alert-event">
                    <Td className="whitespace-nowrap font-mono text-xs">{e.created_at.replace('T', ' ').slice(0, 19)}</Td>
                    <Td>
                      {renderMessage(locale, e)}
                      <div className="font-mono text-xs text-slate-500">{e.id}</div>
                    </Td>
                    <Td>
                      <Badge tone={deliveryTone[e.delivery.status]} title={e.delivery.last_error ?? undefined}>
                        {t(deliveryLabel[e.delivery.status])}
                      </Badge>
                      {e.delivery.attempts > 1 && <div className="text-xs text-slate-500">{t('{n} attempts', { n: e.delivery.attempts })}</div>}
                    </Td>
                    <Td>
                      {e.dismissed_at ? (
                        <span className="text-xs text-slate-500">{t('dismissed')}</span>
                      ) : (
                        <DismissAlertButton id={e.id} label={t('Dismiss')} ariaLabel={t('Dismiss alert')} />
                      )}
                    </Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
          )}
        </Card>
      </div>
    </>
  );
}

import { PhraseTime } from '@/components/ui/phrase-time';
import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { consoleAnnouncement } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { AnnouncementForm } from '@/components/admin/announcement-form';
import { Alert } from '@/components/ui/alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Announcements')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminAnnouncementsPage() {
  await requireOperator();
  const [current, t] = await Promise.all([consoleAnnouncement(), serverT()]);
  return (
    <>
      <PageHeader title={t('Announcements')} description={t("A notice shown at the top of every user's dashboard.")} />
      <Card>
        <CardHeader title={t('Now showing')} />
        <CardBody>
          {current ? (
            <Alert tone={current.level === 'warning' ? 'warning' : 'info'} title={current.message} data-testid="current-announcement">
              <PhraseTime text={t('Posted {at} by {who}', { who: current.createdBy })} at={current.createdAt} />
            </Alert>
          ) : (
            <p className="text-sm text-slate-500">{t('Nothing: dashboards show no notice.')}</p>
          )}
        </CardBody>
      </Card>
      <Card className="mt-6">
        <CardHeader title={t('Post a notice')} description={t('Replaces the current one.')} />
        <CardBody>
          <AnnouncementForm current={current?.message ?? null} />
        </CardBody>
      </Card>
    </>
  );
}

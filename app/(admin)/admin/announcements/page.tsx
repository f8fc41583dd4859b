import { LocalTime } from '@/components/ui/local-time';
import type { Metadata } from 'next';
import { consoleAnnouncement } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { AnnouncementForm } from '@/components/admin/announcement-form';
import { Alert } from '@/components/ui/alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';

export const metadata: Metadata = { title: 'Announcements · Operator console' };
export const dynamic = 'force-dynamic';

export default async function AdminAnnouncementsPage() {
  await requireOperator();
  const current = await consoleAnnouncement();
  return (
    <>
      <PageHeader title="Announcements" description="A notice shown at the top of every user's dashboard." />
      <Card>
        <CardHeader title="Now showing" />
        <CardBody>
          {current ? (
            <Alert tone={current.level === 'warning' ? 'warning' : 'info'} title={current.message} data-testid="current-announcement">
              Posted <LocalTime iso={current.createdAt.toISOString()} /> by {current.createdBy}
            </Alert>
          ) : (
            <p className="text-sm text-slate-500">Nothing: dashboards show no notice.</p>
          )}
        </CardBody>
      </Card>
      <Card className="mt-6">
        <CardHeader title="Post a notice" description="Replaces the current one." />
        <CardBody>
          <AnnouncementForm current={current?.message ?? null} />
        </CardBody>
      </Card>
    </>
  );
}

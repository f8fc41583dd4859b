import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { requirePageUser } from '@/lib/dashboard/session';
import { PageHeader } from '@/components/ui/page-header';
import { Card, CardBody } from '@/components/ui/card';
import { CreateOrgForm } from '@/components/orgs/org-manager';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Create organization')} · Model Gateway` };
}

// Any signed-in person may create an organization, whatever account is selected: it is theirs.
export default async function NewOrganizationPage() {
  await requirePageUser('/dashboard/organization/new');
  const t = await serverT();
  return (
    <>
      <PageHeader
        title={t('Create organization')}
        description={t('You will be its owner. It starts with its own balance of zero; invite members from its page.')}
      />
      <Card>
        <CardBody>
          <CreateOrgForm />
        </CardBody>
      </Card>
    </>
  );
}

import { serverT } from '@/lib/i18n/server';
import type { Metadata } from 'next';
import { getConfig } from '@/lib/config';
import { requirePageUser } from '@/lib/dashboard/session';
import { listProjects } from '@/lib/projects/queries';
import { PageHeader } from '@/components/ui/page-header';
import { ProjectsManager } from '@/components/dashboard/projects-manager';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Projects')} · Model Gateway` };
}

export default async function ProjectsPage() {
  const user = await requirePageUser('/dashboard/projects');
  const [projects, t] = await Promise.all([listProjects(user.id), serverT()]);
  return (
    <>
      <PageHeader
        title={t('Projects')}
        description={t(
          "A project gives its keys a monthly budget and a model list of their own, on top of each key's. Spend is in USD, per calendar month (UTC).",
        )}
      />
      <ProjectsManager initial={projects} models={[...getConfig().models.keys()]} />
    </>
  );
}

import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { requirePageAccount } from '@/lib/dashboard/session';
import { listInvitations, listMembers, orgAudit } from '@/lib/orgs/queries';
import { orgAllowed, type OrgRole } from '@/lib/orgs/roles';
import { roleLabel } from '@/lib/orgs/labels';
import { PageHeader } from '@/components/ui/page-header';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Table, TBody, THead, Td, Th, Tr } from '@/components/ui/table';
import { LocalTime } from '@/components/ui/local-time';
import { CreateOrgForm, OrgManager, type InvitationRow, type MemberRow } from '@/components/orgs/org-manager';
import { SsoDomainsForm } from '@/components/orgs/sso-domains-form';
import { getSsoDomains } from '@/lib/orgs/sso';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Organization')} · Model Gateway` };
}

/** An audit row's details in one line: the fields that changed, without ids nobody reads. */
function details(before: unknown, after: unknown): string {
  const show = (v: unknown) =>
    v && typeof v === 'object'
      ? Object.entries(v as Record<string, unknown>)
          .filter(([k]) => k !== 'invitation' && k !== 'user_id' && k !== 'owner')
          .map(([k, x]) => `${k}: ${String(x)}`)
          .join(', ')
      : '';
  const b = show(before);
  const a = show(after);
  return b && a ? `${b} → ${a}` : a || b;
}

export default async function OrganizationPage() {
  const user = await requirePageAccount('/dashboard/organization');
  const t = await serverT();
  if (user.personal) {
    return (
      <>
        <PageHeader
          title={t('Organization')}
          description={t('You are using your personal account. An organization shares one balance, its keys and its usage with the members you invite.')}
        />
        <Card>
          <CardHeader title={t('Create organization')} />
          <CardBody>
            <CreateOrgForm />
          </CardBody>
        </Card>
      </>
    );
  }
  const person = { id: user.personId, email: user.email };
  const role: OrgRole = user.role;
  const can = {
    members: orgAllowed(role, 'members'),
    invite: orgAllowed(role, 'invite'),
    rename: orgAllowed(role, 'rename'),
    spend: orgAllowed(role, 'spend'),
    transfer: orgAllowed(role, 'transfer'),
    delete: orgAllowed(role, 'delete'),
  };
  const [members, invitations, audit, sso] = await Promise.all([
    listMembers(user.id, person),
    can.invite ? listInvitations(user.id, person) : Promise.resolve([]),
    orgAllowed(role, 'audit') ? orgAudit(user.id, person, 50) : Promise.resolve(null),
    orgAllowed(role, 'sso') ? getSsoDomains(user.id, person) : Promise.resolve(null),
  ]);
  return (
    <>
      <PageHeader title={user.orgName ?? t('Organization')} description={t('You are {role} in this organization.', { role: roleLabel(role, t) })} />
      <OrgManager
        org={{ id: user.id, name: user.orgName ?? '' }}
        personId={user.personId}
        role={role}
        can={can}
        members={members as MemberRow[]}
        invitations={invitations as InvitationRow[]}
      />
      {sso && (
        <Card className="mt-6" data-testid="org-sso-card">
          <CardHeader
            title={t('Single sign-on')}
            description={t(
              'People with an email address at these domains must sign in through your identity provider: password log-in and sign-up are refused for them. To add a domain, sign in through SSO with a verified address at it first.',
            )}
          />
          <CardBody>
            <SsoDomainsForm orgId={user.id} initial={sso.domains} />
          </CardBody>
        </Card>
      )}
      {audit && (
        <Card className="mt-6" data-testid="org-audit-card">
          <CardHeader title={t('Audit log')} description={t('Changes to members, invitations and the organization, newest first.')} />
          {audit.length === 0 ? (
            <EmptyState title={t('Nothing yet')} />
          ) : (
            <Table data-testid="org-audit">
              <THead>
                <Tr>
                  <Th>{t('When')}</Th>
                  <Th>{t('Who')}</Th>
                  <Th>{t('Action')}</Th>
                  <Th>{t('Details')}</Th>
                </Tr>
              </THead>
              <TBody>
                {audit.map((a) => (
                  <Tr key={a.id} data-testid="org-audit-row">
                    <Td className="whitespace-nowrap">
                      <LocalTime iso={a.at} />
                    </Td>
                    <Td className="break-all">{a.actor}</Td>
                    <Td className="font-mono text-xs">{a.action}</Td>
                    <Td className="break-all text-xs text-slate-600">{details(a.before, a.after)}</Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
          )}
        </Card>
      )}
    </>
  );
}

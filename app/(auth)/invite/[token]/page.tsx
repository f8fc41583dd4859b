import type { Metadata } from 'next';
import Link from 'next/link';
import { serverT } from '@/lib/i18n/server';
import { sessionUser } from '@/lib/dashboard/session';
import { getDb } from '@/lib/db';
import { readInvitationToken } from '@/lib/orgs/queries';
import { normaliseEmail } from '@/lib/password-rules';
import { roleLabel } from '@/lib/orgs/labels';
import { isOrgRole } from '@/lib/orgs/roles';
import { buttonClass } from '@/components/ui/button';
import { Alert } from '@/components/ui/alert';
import { AcceptInvitation } from '@/components/orgs/accept-invitation';
import { SignOutButton } from '@/components/dashboard/sign-out-button';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Invitation')} · Model Gateway`, robots: { index: false } };
}

/**
 * An invitation link (docs/decisions/040, 054): what it offers, and why not when it cannot be used.
 * The row is read here rather than through describeInvitation so a used, revoked or expired link
 * each says which it is. Accepting is POST /api/invitations/accept, which checks all of it again.
 */
async function invitationState(token: string) {
  const claims = readInvitationToken(token);
  const row = claims ? await (await getDb()).invitation.findUnique({ where: { id: claims.id }, include: { org: true } }) : null;
  if (!claims || !row || row.org.deletedAt) return { state: 'invalid' as const };
  if (row.acceptedAt) return { state: 'used' as const };
  if (row.revokedAt) return { state: 'revoked' as const };
  if (row.expiresAt.getTime() <= Date.now() || claims.exp <= Date.now()) return { state: 'expired' as const };
  return { state: 'open' as const, row: { email: row.email, role: row.role, orgName: row.org.name } };
}

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token: raw } = await params;
  const token = decodeURIComponent(raw);
  const t = await serverT();
  const here = `/invite/${encodeURIComponent(token)}`;
  const found = await invitationState(token);

  const refusal = (title: string, text: string) => (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900" data-testid="invite-refused">
        {title}
      </h1>
      <p className="mt-2 text-sm text-slate-600">{text}</p>
      <Link href="/dashboard" className={buttonClass({ variant: 'secondary', className: 'mt-6' })}>
        {t('Go to the dashboard')}
      </Link>
    </>
  );

  if (found.state === 'invalid')
    return refusal(t('This invitation link is not valid'), t('Check that the whole link was copied, or ask for a new invitation.'));
  if (found.state === 'used')
    return refusal(t('This invitation was already used'), t('Each invitation link works once. If you accepted it, the organization is in your switcher.'));
  if (found.state === 'revoked') return refusal(t('This invitation was revoked'), t('Ask an owner or admin of the organization for a new one.'));
  if (found.state === 'expired') {
    return refusal(t('This invitation has expired'), t('Invitations last 7 days. Ask an owner or admin of the organization for a new one.'));
  }
  const row = found.row;

  const role = isOrgRole(row.role) ? row.role : 'developer';
  const user = await sessionUser();
  const matches = user !== null && normaliseEmail(user.email) === row.email;
  return (
    <>
      <h1 className="text-xl font-semibold tracking-tight text-slate-900">{t('Join {org}', { org: row.orgName })}</h1>
      <p className="mt-2 text-sm text-slate-600" data-testid="invite-offer">
        {t('{email} is invited as {role}.', { email: row.email, role: roleLabel(role, t) })}
      </p>
      <div className="mt-6">
        {matches ? (
          <AcceptInvitation token={token} />
        ) : user ? (
          <>
            <Alert tone="error" data-testid="invite-wrong-email">
              {t('You are signed in as {email}, but this invitation is for {invited}. Log out and sign in with that address.', {
                email: user.email,
                invited: row.email,
              })}
            </Alert>
            <div className="mt-4">
              <SignOutButton label={t('Log out')} busyLabel={t('Working…')} />
            </div>
          </>
        ) : (
          <div className="flex flex-col gap-3">
            <p className="text-sm text-slate-600">
              {t('Sign in as {email}, or create an account with it, and you come back here to accept.', { email: row.email })}
            </p>
            <Link href={`/login?callbackUrl=${encodeURIComponent(here)}`} className={buttonClass({})} data-testid="invite-login">
              {t('Log in')}
            </Link>
            <Link
              href={`/register?callbackUrl=${encodeURIComponent(here)}&email=${encodeURIComponent(row.email)}`}
              className={buttonClass({ variant: 'secondary' })}
              data-testid="invite-register"
            >
              {t('Sign up')}
            </Link>
          </div>
        )}
      </div>
    </>
  );
}

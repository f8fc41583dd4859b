'use client';

import { useState, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { useApiError, useT } from '@/lib/i18n/client';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { Field, Input, Select } from '@/components/ui/input';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { CopyButton } from '@/components/ui/copy-button';
import { Table, TBody, THead, Td, Th, Tr } from '@/components/ui/table';
import { roleLabel } from '@/lib/orgs/labels';
import { formatMoneyText } from '@/lib/format';
import type { OrgRole } from '@/lib/orgs/roles';

export interface MemberRow {
  user_id: string;
  email: string;
  role: OrgRole;
  spend_this_month_usd: string;
}

export interface InvitationRow {
  id: string;
  email: string;
  role: OrgRole;
  status: string;
  expires_at: string;
}

export interface OrgCan {
  members: boolean;
  invite: boolean;
  rename: boolean;
  spend: boolean;
  transfer: boolean;
  delete: boolean;
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * The organization's page: rename, members (role, spend this month, change role, remove), invite
 * and pending invitations, and the owner's transfer and delete. Each control is shown only to the
 * roles lib/orgs/roles.ts allows; the API checks again.
 */
export function OrgManager({
  org,
  personId,
  role,
  can,
  members,
  invitations,
}: {
  org: { id: string; name: string };
  personId: string;
  role: OrgRole;
  can: OrgCan;
  members: MemberRow[];
  invitations: InvitationRow[];
}) {
  const t = useT();
  const apiError = useApiError();
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState(org.name);
  const [inviteEmail, setInviteEmail] = useState('');
  const [inviteRole, setInviteRole] = useState<OrgRole>('developer');
  const [inviteLink, setInviteLink] = useState<{ email: string; link: string; mailed: boolean } | null>(null);
  const [confirmRemove, setConfirmRemove] = useState<string | null>(null);
  const [transferTo, setTransferTo] = useState('');
  const [confirmTransfer, setConfirmTransfer] = useState(false);
  const [deleteName, setDeleteName] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});

  async function act(method: string, path: string, body: unknown, done: (res: Response) => Promise<void> | void) {
    setBusy(true);
    setError(null);
    setNotice(null);
    setFields({});
    try {
      const res = await call(method, path, body);
      if (!res.ok) {
        const e = await apiError(res);
        setError(e.text);
        setFields(e.fields);
        return;
      }
      await done(res);
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  const base = `/api/orgs/${org.id}`;

  /** Deletes `path` (this person's membership, or the organization) and, once gone, goes back to the personal dashboard. */
  function deleteThenLeave(path: string) {
    setBusy(true);
    void call('DELETE', path).then(async (res) => {
      if (!res.ok) {
        setError((await apiError(res)).text);
        setBusy(false);
        return;
      }
      await call('POST', '/api/orgs/select', { id: null });
      router.push('/dashboard');
      router.refresh();
    });
  }
  const others = members.filter((m) => m.user_id !== personId);
  const manageable = (m: MemberRow) => can.members && m.role !== 'owner' && m.user_id !== personId && (role === 'owner' || m.role !== 'admin');
  const assignable: OrgRole[] = role === 'owner' ? ['admin', 'developer', 'billing'] : ['developer', 'billing'];

  return (
    <div className="space-y-6">
      {error && (
        <Alert tone="error" data-testid="org-error">
          {error}
        </Alert>
      )}
      {notice && (
        <Alert tone="success" data-testid="org-notice">
          {notice}
        </Alert>
      )}

      {can.rename && (
        <Card>
          <CardHeader title={t('Name')} />
          <CardBody>
            <form
              className="flex flex-col gap-3 sm:flex-row sm:items-end"
              onSubmit={(e: FormEvent) => {
                e.preventDefault();
                void act('PATCH', base, { name }, () => setNotice(t('Saved.')));
              }}
            >
              <Field label={t('Organization name')} htmlFor="org-name" error={fields.name} className="flex-1">
                <Input id="org-name" value={name} maxLength={80} required onChange={(e) => setName(e.target.value)} />
              </Field>
              <Button type="submit" disabled={busy}>
                {t('Rename')}
              </Button>
            </form>
          </CardBody>
        </Card>
      )}

      <Card>
        <CardHeader title={t('Members')} description={can.spend ? t('Spend is this UTC month, from the keys each member created.') : undefined} />
        <Table data-testid="org-members">
          <THead>
            <Tr>
              <Th>{t('Email')}</Th>
              <Th>{t('Role')}</Th>
              {can.spend && <Th className="text-right">{t('Spend this month')}</Th>}
              <Th>
                <span className="sr-only">{t('Actions')}</span>
              </Th>
            </Tr>
          </THead>
          <TBody>
            {members.map((m) => (
              <Tr key={m.user_id} data-testid="org-member" data-email={m.email}>
                <Td className="break-all">
                  {m.email}
                  {m.user_id === personId && <span className="ml-2 text-xs text-slate-500">{t('(you)')}</span>}
                </Td>
                <Td>
                  {manageable(m) ? (
                    <>
                      <label htmlFor={`role-${m.user_id}`} className="sr-only">
                        {t('Role of {email}', { email: m.email })}
                      </label>
                      <Select
                        id={`role-${m.user_id}`}
                        className="h-8 w-auto"
                        value={m.role}
                        disabled={busy}
                        data-testid="member-role"
                        onChange={(e) => void act('PATCH', `${base}/members/${m.user_id}`, { role: e.target.value }, () => setNotice(t('Role changed.')))}
                      >
                        {assignable.map((r) => (
                          <option key={r} value={r}>
                            {roleLabel(r, t)}
                          </option>
                        ))}
                      </Select>
                    </>
                  ) : (
                    <Badge tone={m.role === 'owner' ? 'violet' : 'neutral'}>{roleLabel(m.role, t)}</Badge>
                  )}
                </Td>
                {can.spend && (
                  <Td className="text-right tabular-nums" data-testid="member-spend">
                    {formatMoneyText(m.spend_this_month_usd)}
                  </Td>
                )}
                <Td className="whitespace-nowrap text-right">
                  {manageable(m) &&
                    (confirmRemove === m.user_id ? (
                      <span className="inline-flex items-center gap-2">
                        <span className="text-xs text-slate-600">{t('Remove and revoke their keys?')}</span>
                        <Button
                          size="sm"
                          variant="danger"
                          disabled={busy}
                          data-testid="member-remove-confirm"
                          onClick={() =>
                            void act('DELETE', `${base}/members/${m.user_id}`, undefined, () => {
                              setConfirmRemove(null);
                              setNotice(t('{email} was removed; their keys here are revoked.', { email: m.email }));
                            })
                          }
                        >
                          {t('Remove')}
                        </Button>
                        <Button size="sm" variant="secondary" onClick={() => setConfirmRemove(null)}>
                          {t('Cancel')}
                        </Button>
                      </span>
                    ) : (
                      <Button size="sm" variant="secondary" data-testid="member-remove" onClick={() => setConfirmRemove(m.user_id)}>
                        {t('Remove')}
                        <span className="sr-only"> {m.email}</span>
                      </Button>
                    ))}
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      </Card>

      {can.invite && (
        <Card>
          <CardHeader title={t('Invite a member')} description={t('The link works once, for that email address, for 7 days.')} />
          <CardBody className="space-y-4">
            <form
              className="grid gap-3 sm:grid-cols-[1fr_auto_auto] sm:items-end"
              onSubmit={(e: FormEvent) => {
                e.preventDefault();
                const email = inviteEmail;
                void act('POST', `${base}/invitations`, { email, role: inviteRole }, async (res) => {
                  const body = (await res.json()) as { link: string; mailed?: boolean };
                  setInviteLink({ email, link: body.link, mailed: body.mailed === true });
                  setInviteEmail('');
                });
              }}
            >
              <Field label={t('Email')} htmlFor="invite-email" error={fields.email}>
                <Input id="invite-email" type="email" autoComplete="off" required value={inviteEmail} onChange={(e) => setInviteEmail(e.target.value)} />
              </Field>
              <Field label={t('Role')} htmlFor="invite-role" error={fields.role}>
                <Select id="invite-role" value={inviteRole} onChange={(e) => setInviteRole(e.target.value as OrgRole)}>
                  {assignable.map((r) => (
                    <option key={r} value={r}>
                      {roleLabel(r, t)}
                    </option>
                  ))}
                </Select>
              </Field>
              <Button type="submit" disabled={busy} data-testid="invite-submit">
                {t('Invite')}
              </Button>
            </form>
            {inviteLink && (
              <div className="rounded-md border border-slate-200 bg-slate-50 p-3 text-sm" data-testid="invite-result">
                <p className="text-slate-700">
                  {inviteLink.mailed
                    ? t('An invitation was mailed to {email}.', { email: inviteLink.email })
                    : t('No mail was sent: give {email} this link.', { email: inviteLink.email })}
                </p>
                {!inviteLink.mailed && (
                  <div className="mt-2 flex flex-col gap-2 sm:flex-row sm:items-center">
                    <code className="min-w-0 flex-1 break-all rounded bg-white px-2 py-1 font-mono text-xs" data-testid="invite-link">
                      {inviteLink.link}
                    </code>
                    <CopyButton value={inviteLink.link} />
                  </div>
                )}
              </div>
            )}
            <h3 className="text-sm font-medium text-slate-900">{t('Pending invitations')}</h3>
            {invitations.filter((i) => i.status === 'pending').length === 0 ? (
              <p className="text-sm text-slate-500">{t('None.')}</p>
            ) : (
              <ul className="divide-y divide-slate-100" data-testid="org-invitations">
                {invitations
                  .filter((i) => i.status === 'pending')
                  .map((i) => (
                    <li key={i.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-2 text-sm" data-testid="org-invitation">
                      <span className="min-w-0 break-all">{i.email}</span>
                      <Badge tone="neutral">{roleLabel(i.role, t)}</Badge>
                      <span className="text-xs text-slate-500">{t('until {date}', { date: i.expires_at.slice(0, 10) })}</span>
                      <Button
                        size="sm"
                        variant="secondary"
                        className="ml-auto"
                        disabled={busy}
                        onClick={() => void act('DELETE', `${base}/invitations/${i.id}`, undefined, () => setNotice(t('Invitation revoked.')))}
                      >
                        {t('Revoke')}
                        <span className="sr-only"> {i.email}</span>
                      </Button>
                    </li>
                  ))}
              </ul>
            )}
          </CardBody>
        </Card>
      )}

      {can.transfer && (
        <Card>
          <CardHeader
            title={t('Transfer ownership')}
            description={t('The new owner gets everything, including deleting the organization; you become an admin.')}
          />
          <CardBody>
            {others.length === 0 ? (
              <p className="text-sm text-slate-500">{t('Invite a member first.')}</p>
            ) : (
              <form
                className="flex flex-col gap-3 sm:flex-row sm:items-end"
                onSubmit={(e: FormEvent) => {
                  e.preventDefault();
                  if (!confirmTransfer) return setConfirmTransfer(true);
                  void act('POST', `${base}/transfer`, { user_id: transferTo }, () => {
                    setConfirmTransfer(false);
                    setNotice(t('Ownership transferred.'));
                  });
                }}
              >
                <Field label={t('New owner')} htmlFor="transfer-to" className="flex-1">
                  <Select
                    id="transfer-to"
                    required
                    value={transferTo}
                    onChange={(e) => {
                      setTransferTo(e.target.value);
                      setConfirmTransfer(false);
                    }}
                  >
                    <option value="">{t('Choose a member')}</option>
                    {others.map((m) => (
                      <option key={m.user_id} value={m.user_id}>
                        {m.email}
                      </option>
                    ))}
                  </Select>
                </Field>
                <Button type="submit" variant={confirmTransfer ? 'danger' : 'secondary'} disabled={busy || !transferTo}>
                  {confirmTransfer ? t('Confirm transfer') : t('Transfer')}
                </Button>
              </form>
            )}
          </CardBody>
        </Card>
      )}

      {role !== 'owner' && (
        <Card>
          <CardHeader title={t('Leave organization')} description={t('Your keys in this organization are revoked when you leave.')} />
          <CardBody>
            <Button
              variant="secondary"
              disabled={busy}
              data-testid="org-leave"
              onClick={() => {
                if (!window.confirm(t('Leave {org}? Your keys in it are revoked.', { org: org.name }))) return;
                deleteThenLeave(`${base}/members/${personId}`);
              }}
            >
              {t('Leave organization')}
            </Button>
          </CardBody>
        </Card>
      )}

      {can.delete && (
        <Card className="border-red-200">
          <CardHeader
            title={t('Delete organization')}
            description={t('Every key is revoked at once and nobody can use its balance again. Its ledger is kept.')}
          />
          <CardBody>
            <form
              className="flex flex-col gap-3 sm:flex-row sm:items-end"
              onSubmit={(e: FormEvent) => {
                e.preventDefault();
                setError(null);
                deleteThenLeave(base);
              }}
            >
              <Field label={t('Type the name "{name}" to confirm', { name: org.name })} htmlFor="delete-name" className="flex-1">
                <Input id="delete-name" autoComplete="off" value={deleteName} onChange={(e) => setDeleteName(e.target.value)} />
              </Field>
              <Button type="submit" variant="danger" disabled={busy || deleteName !== org.name} data-testid="org-delete">
                {t('Delete organization')}
              </Button>
            </form>
          </CardBody>
        </Card>
      )}
    </div>
  );
}

/** The form that creates an organization (the switcher's "Create organization", and a personal account's page). */
export function CreateOrgForm() {
  const t = useT();
  const apiError = useApiError();
  const router = useRouter();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="flex flex-col gap-3 sm:flex-row sm:items-end"
      onSubmit={(e: FormEvent) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        void call('POST', '/api/orgs', { name }).then(async (res) => {
          if (!res.ok) {
            setError((await apiError(res)).text);
            setBusy(false);
            return;
          }
          // Created and selected: its page is where members are invited.
          router.push('/dashboard/organization');
          router.refresh();
        });
      }}
    >
      <Field label={t('Organization name')} htmlFor="new-org-name" error={error ?? undefined} className="flex-1">
        <Input id="new-org-name" required maxLength={80} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Button type="submit" disabled={busy} data-testid="org-create">
        {t('Create organization')}
      </Button>
    </form>
  );
}

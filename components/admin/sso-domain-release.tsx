'use client';

import { useT } from '@/lib/i18n/client';
import { ConfirmDeleteButton } from './confirm-delete-button';

export function ReleaseSsoDomainButton({ domain, org }: { domain: string; org: string }) {
  const t = useT();
  return (
    <ConfirmDeleteButton
      url={`/api/admin/sso/domains/${encodeURIComponent(domain)}`}
      question={t('Release {domain} from {org}? Password log-in works again for its addresses.', { domain, org })}
      label={t('Release')}
      testId={`release-sso-domain-${domain}`}
    />
  );
}

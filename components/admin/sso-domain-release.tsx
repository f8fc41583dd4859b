'use client';

import { useT } from '@/lib/i18n/client';
import { Button } from '@/components/ui/button';
import { useAdminAction } from './use-admin-action';

export function ReleaseSsoDomainButton({ domain, org }: { domain: string; org: string }) {
  const { busy, error, send } = useAdminAction();
  const t = useT();
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant="danger"
        disabled={busy}
        onClick={() =>
          confirm(t('Release {domain} from {org}? Password log-in works again for its addresses.', { domain, org })) &&
          send(`/api/admin/sso/domains/${encodeURIComponent(domain)}`, 'DELETE')
        }
        data-testid={`release-sso-domain-${domain}`}
      >
        {t('Release')}
      </Button>
      {error && <span className="text-xs text-red-700">{error}</span>}
    </span>
  );
}

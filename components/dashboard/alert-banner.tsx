import { currentLocale, serverT } from '@/lib/i18n/server';
import { renderMessage } from '@/lib/i18n/codes';
import Link from 'next/link';
import { listAlertEvents } from '@/lib/alerts/events';
import { DismissAlertButton } from '@/components/dashboard/dismiss-alert-button';

const SHOWN = 3;

/** The account's undismissed budget and balance alerts, above every dashboard page. */
export async function AlertBanner({ userId }: { userId: string }) {
  const t = await serverT();
  const locale = await currentLocale();
  const events = await listAlertEvents(userId, { undismissedOnly: true, limit: SHOWN + 1 }).catch(() => []);
  if (events.length === 0) return null;
  return (
    <div role="alert" data-testid="alert-banner" className="border-b border-amber-200 bg-amber-50 py-1.5 text-sm text-amber-900">
      <ul className="mx-auto max-w-6xl space-y-0.5 px-4 sm:px-6">
        {events.slice(0, SHOWN).map((e) => (
          <li key={e.id} className="flex items-center gap-2" data-testid="alert-banner-item">
            <span className="min-w-0 flex-1">{renderMessage(locale, e)}</span>
            <DismissAlertButton id={e.id} label={t('Dismiss')} ariaLabel={t('Dismiss alert')} />
          </li>
        ))}
      </ul>
      <p className="mx-auto max-w-6xl px-4 text-xs sm:px-6">
        {events.length > SHOWN ? t('More alerts: ') : ''}
        <Link href="/dashboard/alerts" className="font-medium underline">
          {t('Alert settings and history')}
        </Link>
      </p>
    </div>
  );
}

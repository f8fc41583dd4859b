import { activeAnnouncement } from '@/lib/admin/announcements';
import { cn } from '@/components/ui/cn';

/** The operator's current notice (maintenance, price changes), above every dashboard page. */
export async function AnnouncementBanner() {
  const a = await activeAnnouncement().catch(() => null);
  if (!a) return null;
  return (
    <div
      role="status"
      data-testid="announcement"
      className={cn(
        'border-b px-4 py-2 text-center text-sm',
        a.level === 'warning' ? 'border-amber-200 bg-amber-50 text-amber-900' : 'border-sky-200 bg-sky-50 text-sky-900',
      )}
    >
      {a.message}
    </div>
  );
}

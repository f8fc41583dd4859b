import type { Translate } from '@/lib/i18n/translate';
import type { DaySaving } from '@/lib/cache/savings';
import { int, usd } from '@/lib/dashboard/format';
import { Card, CardHeader } from '@/components/ui/card';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

/** The usage page's card of what the upstreams' prompt caches saved per day (lib/cache/savings.ts). */
export function CacheSavingsCard({ savings, tr }: { savings: DaySaving[]; tr: Translate }) {
  if (savings.length === 0) return null;
  const total = savings.reduce((s, d) => s + d.savingPico, 0n);
  return (
    <Card className="mt-4 sm:mt-6" data-testid="cache-savings">
      <CardHeader
        title={tr('Saved by prompt caching')}
        description={tr('{usd} in this range: cache-read tokens at the input price, less what they cost.', { usd: usd(total) })}
      />
      <Table>
        <THead>
          <Tr>
            <Th>{tr('Day (UTC)')}</Th>
            <Th className="text-right">{tr('Cache read tokens')}</Th>
            <Th className="text-right">{tr('Saved')}</Th>
          </Tr>
        </THead>
        <TBody>
          {[...savings].reverse().map((d) => (
            <Tr key={d.date} data-testid="cache-saving-row">
              <Td className="font-medium text-slate-900">{d.date}</Td>
              <Td className="text-right tabular-nums">{int(d.cacheReadTokens)}</Td>
              <Td className="text-right tabular-nums">{usd(d.savingPico)}</Td>
            </Tr>
          ))}
        </TBody>
      </Table>
    </Card>
  );
}

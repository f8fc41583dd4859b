import { getConfig, tierNames } from '@/lib/config';
import { currentMessages, serverT } from '@/lib/i18n/server';
import { formatCount, formatTokenSize, formatMoney } from '@/lib/format';
import { tierLabel } from '@/lib/dashboard/format';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

const range = (low: number, high: number) => (high > low ? `${formatCount(low)}–${formatCount(high)}` : formatCount(low));

/**
 * The tiers' limits and how each is reached, as the landing page and /pricing show them.
 * `responsive` hides the secondary columns on small screens (the pricing page has a models table beside it).
 */
export async function TierTable({ responsive = false }: { responsive?: boolean }) {
  const config = getConfig();
  const [{ t: m }, tr] = await Promise.all([currentMessages(), serverT()]);
  const small = responsive ? 'hidden sm:table-cell' : '';
  const medium = responsive ? 'hidden md:table-cell' : '';
  return (
    <Table>
      <THead>
        <tr>
          <Th>{tr('Tier')}</Th>
          <Th className="text-right">{m.overview.rpm}</Th>
          <Th className={`text-right ${small}`}>{m.overview.rph}</Th>
          <Th className="text-right">{m.overview.tokensPerDay}</Th>
          <Th className={`text-right ${small}`}>{m.overview.concurrent}</Th>
          <Th className={medium}>{tr('How to get it')}</Th>
        </tr>
      </THead>
      <TBody>
        {tierNames.map((name) => {
          const t = config.tiers[name];
          return (
            <Tr key={name}>
              <Td className="font-medium text-slate-900">{tierLabel(name)}</Td>
              <Td className="text-right tabular-nums">{range(t.rpm, t.maxRpm)}</Td>
              <Td className={`text-right tabular-nums ${small}`}>{formatCount(t.rph)}</Td>
              <Td className="text-right tabular-nums">{t.tokensPerDay === null ? m.overview.unlimited : formatTokenSize(t.tokensPerDay)}</Td>
              <Td className={`text-right tabular-nums ${small}`}>{range(t.concurrency, t.maxConcurrency)}</Td>
              <Td className={`text-slate-600 ${medium}`}>
                {name === 'free'
                  ? tr('Sign up')
                  : t.promoteAtMonthlySpend !== null
                    ? tr('Spend {amount} in a month', { amount: formatMoney(t.promoteAtMonthlySpend) })
                    : tr('Contact us')}
              </Td>
            </Tr>
          );
        })}
      </TBody>
    </Table>
  );
}

import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { consoleChannels } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { ChannelControls } from '@/components/admin/channel-controls';
import { Badge } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';

export async function generateMetadata(): Promise<Metadata> {
  const t = await serverT();
  return { title: `${t('Channels')} · ${t('Operator console')}` };
}
export const dynamic = 'force-dynamic';

export default async function AdminChannelsPage() {
  await requireOperator();
  const [channels, t] = await Promise.all([consoleChannels(), serverT()]);
  // What disabling a channel costs, named in its confirmation: models no other enabled channel serves.
  const servedElsewhere = (name: string, model: string) => channels.some((o) => o.name !== name && !o.disabled && o.models.includes(model));
  return (
    <>
      <PageHeader
        title={t('Channels')}
        description={t(
          'Live state across instances (request figures: last 5 minutes). Disable, enable and weight take effect on every instance within a second and survive restarts.',
        )}
      />
      <Card>
        <Table>
          <THead>
            <Tr>
              <Th>{t('Channel')}</Th>
              <Th>{t('State')}</Th>
              <Th className="text-right">{t('Req/min')}</Th>
              <Th className="text-right">{t('Errors')}</Th>
              <Th className="text-right">p50 / p99</Th>
              <Th>{t('Priority · weight')}</Th>
              <Th>{t('Controls')}</Th>
            </Tr>
          </THead>
          <TBody>
            {channels.map((c) => (
              <Tr key={c.name} data-testid="channel-row" data-channel={c.name}>
                <Td>
                  <div className="font-medium text-slate-900">{c.name}</div>
                  <div className="text-xs text-slate-500">
                    {c.protocol} · {c.host} · {t('key {hint}', { hint: c.keyHint })}
                  </div>
                </Td>
                <Td>
                  <div className="flex flex-col items-start gap-1">
                    {c.disabled ? (
                      <Badge tone="red" data-testid="channel-state">
                        {c.disabledReason === 'auto' ? t('disabled (auto)') : t('disabled')}
                      </Badge>
                    ) : (
                      <Badge tone="green" data-testid="channel-state">
                        {t('enabled')}
                      </Badge>
                    )}
                    <span className="text-xs text-slate-500">
                      {c.breakerOpen > 0
                        ? t('breaker open on {n}/{of}', { n: c.breakerOpen, of: c.instances })
                        : c.instances === 1
                          ? t('breaker closed (1 instance)')
                          : t('breaker closed ({n} instances)', { n: c.instances })}
                      {c.consecutiveFailures > 0 ? ` · ${t('{n} failures in a row', { n: c.consecutiveFailures })}` : ''}
                    </span>
                  </div>
                </Td>
                <Td className="text-right tabular-nums">{c.rpm}</Td>
                <Td className="text-right tabular-nums">
                  {(c.errorRate * 100).toFixed(1)}%<div className="text-xs text-slate-500">{t('{n} req', { n: c.requests5m })}</div>
                </Td>
                <Td className="text-right tabular-nums">{c.p50Ms === null ? '–' : `${c.p50Ms} / ${c.p99Ms} ms`}</Td>
                <Td className="tabular-nums">
                  {c.priority} ·{' '}
                  {c.weightOverride !== null ? (
                    <>
                      <s className="text-slate-500">{c.weight}</s> <b>{c.weightOverride}</b>
                    </>
                  ) : (
                    c.weight
                  )}
                </Td>
                <Td>
                  <ChannelControls
                    name={c.name}
                    disabled={c.disabled}
                    weight={c.weightOverride}
                    strandedModels={c.models.filter((m) => !servedElsewhere(c.name, m))}
                  />
                </Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      </Card>
    </>
  );
}

import type { Metadata } from 'next';
import { serverT } from '@/lib/i18n/server';
import { consoleChannels } from '@/lib/admin/console';
import { requireOperator } from '@/lib/admin/guard';
import { ChannelControls } from '@/components/admin/channel-controls';
import { ChannelLimits } from '@/components/admin/channel-limits';
import { Badge } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { Table, TBody, Td, Th, THead, Tr } from '@/components/ui/table';
import type { ChannelHealthView } from '@/lib/channels/health';
import type { ChannelLimit } from '@/lib/admin/stats';
import type { HealthState } from '@/lib/channels/health-machine';
import type { Translate } from '@/lib/i18n/translate';

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
          'Live state across instances (request figures: last 5 minutes). Disable, enable, weight and limits take effect on every instance within a second and survive restarts.',
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
                    <HealthBadge state={c.health.state} t={t} />
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
      <section aria-labelledby="limits-heading" className="mt-6">
        <h2 id="limits-heading" className="mb-1 text-base font-semibold text-slate-900">
          {t('Channel limits')}
        </h2>
        <p className="mb-3 text-sm text-slate-600">
          {t(
            "Requests in flight and tokens per minute (input and output) each channel may take, across every instance. A value set here replaces the operator config's on every instance within a second and survives restarts; a channel at its limit is skipped for the model's other channels.",
          )}
        </p>
        <ul className="grid gap-3 sm:grid-cols-2">
          {channels.map((c) => (
            <li key={c.name} data-testid="channel-limits" data-limits-channel={c.name}>
              <Card className="h-full p-4">
                <div className="break-all font-medium text-slate-900">{c.name}</div>
                <dl className="mt-2 grid grid-cols-1 gap-1 text-sm text-slate-700">
                  <LimitLine label={t('In flight')} limit={c.limits.concurrency} t={t} testId="limit-concurrency-now" />
                  <LimitLine label={t('Tokens this minute')} limit={c.limits.tpm} t={t} testId="limit-tpm-now" />
                </dl>
                <ChannelLimits name={c.name} concurrency={c.limits.concurrency} tpm={c.limits.tpm} />
              </Card>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="health-heading" className="mt-6">
        <h2 id="health-heading" className="mb-1 text-base font-semibold text-slate-900">
          {t('Channel health')}
        </h2>
        <p className="mb-3 text-sm text-slate-600">
          {t(
            'From the error rate and latency of the last window, shared by every instance. A failed channel gets no traffic while others remain, and is probed until it passes.',
          )}
        </p>
        <ul className="grid gap-3 sm:grid-cols-2">
          {channels.map((c) => (
            <li key={c.name} data-testid="channel-health" data-health-channel={c.name} data-state={c.health.state}>
              <Card className="h-full p-4">
                <div className="flex flex-wrap items-center justify-between gap-2">
                  <span className="break-all font-medium text-slate-900">{c.name}</span>
                  <HealthBadge state={c.health.state} t={t} />
                </div>
                <p className="mt-2 text-sm text-slate-700" data-testid="health-reason">
                  {reasonText(c.health, t)}
                </p>
                {c.health.since && (
                  <p className="text-xs text-slate-500">{t('since {time}', { time: c.health.since.slice(0, 19).replace('T', ' ') + ' UTC' })}</p>
                )}
                <p className="mt-1 text-xs text-slate-500 tabular-nums">
                  {t('Window: {ok} ok · {failed} failed', { ok: c.health.window.ok, failed: c.health.window.failed })}
                  {c.health.window.meanLatencyMs !== null ? ` · ${t('mean {ms} ms', { ms: c.health.window.meanLatencyMs })}` : ''}
                </p>
                {c.health.samples.length > 0 && (
                  <details className="mt-2 text-sm">
                    <summary className="cursor-pointer text-slate-700">{t('Recent errors ({n})', { n: c.health.samples.length })}</summary>
                    <ul className="mt-1 space-y-1" data-testid="health-samples">
                      {c.health.samples.map((s, i) => (
                        <li key={i} className="break-words text-xs text-slate-600">
                          <span className="tabular-nums text-slate-500">{new Date(s.at).toISOString().slice(11, 19)}</span>{' '}
                          {s.status !== null && <b className="tabular-nums">{s.status}</b>} {s.error}
                          {s.probe ? ` · ${t('probe')}` : ''}
                          {!s.counted ? ` · ${t('not counted')}` : ''}
                        </li>
                      ))}
                    </ul>
                  </details>
                )}
              </Card>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/** What a limit holds now against it, and where the limit comes from. */
function LimitLine({ label, limit, t, testId }: { label: string; limit: ChannelLimit; t: Translate; testId: string }) {
  return (
    <div className="flex flex-wrap justify-between gap-x-2">
      <dt className="text-slate-500">{label}</dt>
      <dd className="tabular-nums" data-testid={testId}>
        {limit.limit === null
          ? t('no limit (not counted)')
          : t('{n} of {limit}', { n: (limit.current ?? 0).toLocaleString('en-US'), limit: limit.limit.toLocaleString('en-US') })}
        {limit.limit !== null && <span className="text-xs text-slate-500"> · {limit.override !== null ? t('set in the console') : t('from the config')}</span>}
      </dd>
    </div>
  );
}

const healthTone = { healthy: 'green', degraded: 'amber', recovering: 'blue', failed: 'red' } as const;

function HealthBadge({ state, t }: { state: HealthState; t: Translate }) {
  return (
    <Badge tone={healthTone[state]} data-testid="health-state">
      {t(state)}
    </Badge>
  );
}

/** Why the channel is in its state, in the viewer's language. */
function reasonText(h: ChannelHealthView, t: Translate): string {
  const r = h.reason;
  if (!r) return t('No state change recorded yet.');
  const pct = ((r.errorRate ?? 0) * 100).toFixed(0);
  switch (r.code) {
    case 'error_rate':
      return t('{pct}% of {n} requests failed in the window.', { pct, n: r.requests ?? 0 });
    case 'latency':
      return t('Mean latency {ms} ms over {n} requests.', { ms: r.latencyMs ?? 0, n: r.requests ?? 0 });
    case 'window_clear':
      return t('Back under the thresholds ({pct}% errors of {n} requests).', { pct, n: r.requests ?? 0 });
    case 'probe_passed':
      return t('Probe passed ({n} in a row).', { n: r.probes ?? 1 });
    case 'probes_passed':
      return t('{n} probes passed in a row.', { n: r.probes ?? 0 });
    case 'probe_failed':
      return t('Probe failed: {detail}', { detail: r.detail ?? '' });
  }
}

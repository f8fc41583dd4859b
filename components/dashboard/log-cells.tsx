import { serverT } from '@/lib/i18n/server';
import type { LogEntry } from '@/lib/dashboard/queries';
import { isFallback } from '@/lib/dashboard/serialize';
import { int } from '@/lib/dashboard/format';
import { Badge, type BadgeTone } from '@/components/ui/badge';

// Pieces of a request-log row, shared by the list and the detail page.

export async function StatusBadge({ status, outcome }: Pick<LogEntry, 'status' | 'outcome'>) {
  const t = await serverT();
  const tone: BadgeTone = outcome === 'ok' ? 'green' : outcome === 'client_closed' ? 'neutral' : status >= 500 ? 'red' : 'amber';
  const label =
    outcome === 'ok'
      ? String(status)
      : outcome === 'client_closed'
        ? t('{status} client closed', { status })
        : outcome === 'error'
          ? t('{status} error', { status })
          : outcome === 'rejected'
            ? t('{status} rejected', { status })
            : outcome === 'upstream_error'
              ? t('{status} upstream_error', { status })
              : `${status} ${outcome}`;
  return (
    <Badge tone={tone} data-testid="log-status">
      {label}
    </Badge>
  );
}

export async function RouteBadge({ entry }: { entry: Pick<LogEntry, 'modelRequested' | 'modelServed'> }) {
  const t = await serverT();
  if (isFallback(entry)) {
    return (
      <Badge tone="amber" title={t('The router served a different model than the one requested')} data-testid="fallback">
        {t('fallback')}
      </Badge>
    );
  }
  if (entry.modelRequested === 'service-auto') {
    return (
      <Badge tone="violet" title={t('The router picked the model (service-auto)')}>
        {t('auto')}
      </Badge>
    );
  }
  return null;
}

export async function ModelCell({ entry }: { entry: Pick<LogEntry, 'modelRequested' | 'modelServed'> }) {
  const t = await serverT();
  const requested = entry.modelRequested ?? '—';
  const differs = entry.modelServed && entry.modelServed !== entry.modelRequested;
  return (
    <div className="min-w-0">
      <div className="flex items-center gap-1.5">
        <span className={`whitespace-nowrap ${differs ? 'text-slate-500 line-through decoration-slate-300' : 'font-medium text-slate-900'}`}>{requested}</span>
        <RouteBadge entry={entry} />
      </div>
      {differs && (
        <div className="whitespace-nowrap font-medium text-slate-900" title={t('Model that served the request')}>
          → {entry.modelServed}
        </div>
      )}
    </div>
  );
}

export async function TokensCell({
  entry,
}: {
  entry: Pick<LogEntry, 'promptTokens' | 'completionTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'tokensEstimated'>;
}) {
  const t = await serverT();
  const cache = entry.cacheReadTokens + entry.cacheWriteTokens;
  return (
    <div className="tabular-nums">
      <div className="whitespace-nowrap">
        {entry.tokensEstimated && <span title={t('Estimated: the upstream reported no usage')}>~</span>}
        {int(entry.promptTokens)} / {int(entry.completionTokens)}
        {entry.tokensEstimated && (
          <Badge tone="neutral" className="ml-1.5" title={t('Estimated: the upstream reported no usage, so we counted the tokens ourselves')}>
            {t('est.')}
          </Badge>
        )}
      </div>
      {cache > 0 && (
        <div className="text-xs text-slate-500">
          {t('cache {read} read · {write} write', { read: int(entry.cacheReadTokens), write: int(entry.cacheWriteTokens) })}
        </div>
      )}
    </div>
  );
}

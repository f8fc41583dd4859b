import type { LogEntry } from '@/lib/dashboard/queries';
import { isFallback } from '@/lib/dashboard/serialize';
import { int } from '@/lib/dashboard/format';
import { Badge, type BadgeTone } from '@/components/ui/badge';

// Pieces of a request-log row, shared by the list and the detail page.

export function StatusBadge({ status, outcome }: Pick<LogEntry, 'status' | 'outcome'>) {
  const tone: BadgeTone = outcome === 'ok' ? 'green' : outcome === 'client_closed' ? 'neutral' : status >= 500 ? 'red' : 'amber';
  const label = outcome === 'ok' ? String(status) : outcome === 'client_closed' ? `${status} client closed` : `${status} ${outcome === 'error' ? 'error' : outcome}`;
  return (
    <Badge tone={tone} data-testid="log-status">
      {label}
    </Badge>
  );
}

export function RouteBadge({ entry }: { entry: Pick<LogEntry, 'modelRequested' | 'modelServed'> }) {
  if (isFallback(entry)) {
    return (
      <Badge tone="amber" title="The router served a different model than the one requested" data-testid="fallback">
        fallback
      </Badge>
    );
  }
  if (entry.modelRequested === 'service-auto') {
    return (
      <Badge tone="violet" title="The router picked the model (service-auto)">
        auto
      </Badge>
    );
  }
  return null;
}

export function ModelCell({ entry }: { entry: Pick<LogEntry, 'modelRequested' | 'modelServed'> }) {
  const requested = entry.modelRequested ?? '—';
  const differs = entry.modelServed && entry.modelServed !== entry.modelRequested;
  return (
    <div className="min-w-0">
      <div className="flex items-center gap-1.5">
        <span className={`whitespace-nowrap ${differs ? 'text-slate-500 line-through decoration-slate-300' : 'font-medium text-slate-900'}`}>{requested}</span>
        <RouteBadge entry={entry} />
      </div>
      {differs && (
        <div className="whitespace-nowrap font-medium text-slate-900" title="Model that served the request">
          → {entry.modelServed}
        </div>
      )}
    </div>
  );
}

export function TokensCell({ entry }: { entry: Pick<LogEntry, 'promptTokens' | 'completionTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'tokensEstimated'> }) {
  const cache = entry.cacheReadTokens + entry.cacheWriteTokens;
  return (
    <div className="tabular-nums">
      <div className="whitespace-nowrap">
        {entry.tokensEstimated && <span title="Estimated: the upstream reported no usage">~</span>}
        {int(entry.promptTokens)} / {int(entry.completionTokens)}
        {entry.tokensEstimated && (
          <Badge tone="neutral" className="ml-1.5" title="Estimated: the upstream reported no usage, so we counted the tokens ourselves">
            est.
          </Badge>
        )}
      </div>
      {cache > 0 && (
        <div className="text-xs text-slate-500">
          cache {int(entry.cacheReadTokens)} read · {int(entry.cacheWriteTokens)} write
        </div>
      )}
    </div>
  );
}

// Runs once when the Next.js server starts (next start, next dev, and inside `npm start`'s custom
// server, which handles shutdown itself). Node.js runtime only.
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  // OpenTelemetry traces of /v1 requests, only when an OTLP endpoint is set (once per process).
  await (await import('@/lib/telemetry/tracing')).initTracing();
  const { installRouteHandlerShutdown } = await import('@/lib/shutdown');
  installRouteHandlerShutdown();
  // Credits recorded but not yet in the live balance (lib/billing/ledger.ts); once per process.
  const { startCreditReconciler } = await import('@/lib/billing/ledger');
  startCreditReconciler();
  // Runtime channel overrides from the operator console, shared through Redis (lib/channels/overrides.ts).
  // The probe is the gateway's (a request upstream), handed down to the channel loops.
  const { startChannelOverrideSync } = await import('@/lib/channels/overrides');
  startChannelOverrideSync((await import('@/lib/gateway/probe')).probeChannel);
  const { startPlanSync } = await import('@/lib/plans/catalogue');
  startPlanSync();
  // Request-log rows a shutdown spooled (the database was down), written once (lib/billing/writer.ts).
  const { replayLogSpool } = await import('@/lib/billing/writer');
  void replayLogSpool().catch(async (err) =>
    (await import('@/lib/log')).log('error', 'request log spool replay failed; the files stay for the next start', { error: String(err) }),
  );
  // Request-log day partitions created ahead and retention (lib/db/partitions.ts); once per process.
  (await import('@/lib/db/partitions')).startPartitionMaintenance();
  // Budget alerts: evaluate thresholds and deliver webhooks (lib/alerts/loop.ts).
  (await import('@/lib/alerts/loop')).startAlerts();
  // Request-log export to the operator's webhook, when configured (lib/log-export/exporter.ts).
  (await import('@/lib/log-export/exporter')).startLogExport();
  // Video generations and batches (lib/gateway/jobs); a no-op when `npm start`'s server started them.
  (await import('@/lib/gateway/jobs/routes')).startJobs();
}

import type { Locale } from '@/lib/i18n/messages';

// The log export console page's words in both languages (kept beside the feature; client-safe).

const en = {
  title: 'Log export',
  description: 'Request-log rows to your webhook in signed batches, a replay of any time range, and downloads of any range as CSV or JSONL.',
  sink: 'Webhook',
  notConfigured: 'No webhook is configured. Add log_export (url, secret, max_rows, max_seconds) to the operator config and restart.',
  url: 'URL',
  batch: 'Batch',
  batchValue: 'at most {rows} rows or {seconds} s',
  cursor: 'Delivered up to',
  lastSuccess: 'Last delivery',
  lastError: 'Last error',
  delivered: 'Delivered',
  deliveredValue: '{rows} rows in {batches} batches',
  none: 'none',
  replay: 'Replay a time range',
  replayHelp: 'Sends that range’s rows again as batches marked "replay": true (at most 31 days).',
  from: 'From',
  to: 'To',
  startReplay: 'Replay',
  replays: 'Replays',
  noReplays: 'No replays yet',
  status: 'Status',
  range: 'Range',
  rows: 'Rows',
  by: 'By',
  download: 'Download',
  downloadHelp: 'Every account’s requests in the range, newest first, streamed, with a totals line at the end (up to 100,000 rows).',
  account: 'Account (email or id)',
  model: 'Model',
  channel: 'Channel',
  format: 'Format',
  downloadButton: 'Download',
  queued: 'Replay queued.',
  pending: 'pending',
  running: 'running',
  done: 'done',
  failed: 'failed',
};

export type LogExportWords = typeof en;

const zh: LogExportWords = {
  title: '日志导出',
  description: '把请求日志按批签名推送到你的 Webhook，可重放任意时间范围，也可按任意范围下载 CSV 或 JSONL。',
  sink: 'Webhook',
  notConfigured: '尚未配置 Webhook。在运营配置中加入 log_export（url、secret、max_rows、max_seconds）后重启。',
  url: '地址',
  batch: '批次',
  batchValue: '最多 {rows} 行或 {seconds} 秒',
  cursor: '已投递至',
  lastSuccess: '最近投递',
  lastError: '最近错误',
  delivered: '已投递',
  deliveredValue: '{batches} 批共 {rows} 行',
  none: '无',
  replay: '重放时间范围',
  replayHelp: '将该范围内的行重新发送，批次标记为 "replay": true（最多 31 天）。',
  from: '开始',
  to: '结束',
  startReplay: '重放',
  replays: '重放记录',
  noReplays: '暂无重放',
  status: '状态',
  range: '范围',
  rows: '行数',
  by: '操作人',
  download: '下载',
  downloadHelp: '范围内所有账户的请求，按时间倒序流式输出，末尾附合计行（最多 100,000 行）。',
  account: '账户（邮箱或 ID）',
  model: '模型',
  channel: '渠道',
  format: '格式',
  downloadButton: '下载',
  queued: '已加入重放队列。',
  pending: '等待中',
  running: '进行中',
  done: '已完成',
  failed: '失败',
};

export function logExportWords(locale: Locale): LogExportWords {
  return locale === 'zh-CN' ? zh : en;
}

export function fillWords(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

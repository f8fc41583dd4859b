// Simplified Chinese for the caches and reconciliation (issue 44 items 5-7): the dashboard's
// prompt-cache savings, the log detail's cache lines and the console's reconciliation page. A table
// of its own (merged in translate.ts) so that these pages grow without touching the shared tables.

export const zhCaches = {
  // Dashboard: usage and log detail
  'Saved by prompt caching': '提示词缓存节省',
  '{usd} in this range: cache-read tokens at the input price, less what they cost.': '此范围内共 {usd}：缓存读取 token 按输入价计算，减去其实际费用。',
  Saved: '节省',
  'Saved by prompt cache': '提示词缓存节省',
  'Response cache': '响应缓存',
  'Answered from the response cache': '由响应缓存应答',

  // Console: reconciliation
  Reconciliation: '对账',
  'Tokens and cost we recorded per channel and UTC day, to set against each provider’s invoice.':
    '按渠道与 UTC 日统计的已记录 token 与费用，用于与各服务商的账单核对。',
  'Recorded usage': '已记录用量',
  Show: '显示',
  'Uncached input': '未缓存输入',
  'Cache read': '缓存读取',
  'Cache write': '缓存写入',
  Output: '输出',
  'No requests through any channel in this range': '此范围内没有经过任何渠道的请求',
  'Compare with a provider export': '与服务商导出数据比对',
  'Paste or choose the usage CSV exported from OpenAI (usage, grouped by model, daily) or Anthropic (messages usage report, daily). Differences are shown per day and model.':
    '粘贴或选择从 OpenAI（用量，按模型、按日）或 Anthropic（消息用量报告，按日）导出的用量 CSV。差异按日期与模型显示。',
  'Usage CSV': '用量 CSV',
  'CSV file': 'CSV 文件',
  'Channels compared': '参与比对的渠道',
  'All channels of the export’s provider': '该导出所属服务商的全部渠道',
  Compare: '比对',
  Comparing: '正在比对',
  Differences: '差异',
  'Day and model': '日期与模型',
  Recorded: '已记录',
  Difference: '差异',
  'Every day and model matches.': '每个日期与模型均一致。',
  '{n} of {total} day-and-model rows differ.': '{total} 行（日期 × 模型）中有 {n} 行不一致。',
  'Detected format: {format}': '识别的格式：{format}',
} as const;

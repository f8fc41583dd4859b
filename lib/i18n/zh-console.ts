// Simplified Chinese for the operator console (app/(admin), components/admin): the same `t()`
// mechanism as the dashboard (translate.ts), in a table of its own so console pages can grow
// without touching the dashboard's. Phrases the dashboard already has (zh-phrases.ts) are not repeated.

export const zhConsole = {
  // Layout and navigation
  'Operator console': '运营控制台',
  Admin: '管理',
  Accounts: '账户',
  Channels: '通道',
  Codes: '兑换码',
  Announcements: '公告',
  'Audit log': '审计日志',

  // Overview
  'Operator overview': '运营概览',
  'Every account, every channel. Times in UTC; revenue is recharges (Stripe and codes), spend is usage.':
    '所有账户与所有通道。时间为 UTC；收入指充值（Stripe 与兑换码），消费指用量。',
  Today: '今天',
  '7 days': '7 天',
  '30 days': '30 天',
  '{n} requests': '{n} 次请求',
  '{n} errors': '{n} 次错误',
  'revenue {usd} / {cny}': '收入 {usd} / {cny}',
  'spend {usd} / {cny}': '消费 {usd} / {cny}',
  'Spend, last 30 days': '消费，最近 30 天',
  'No requests yet': '还没有请求',
  '{n} req': '{n} 次',
  'By model': '按模型',
  'By channel': '按通道',
  'By tier': '按等级',
  'Top accounts': '消费最多的账户',
  'By spend, last 30 days': '按消费排序，最近 30 天',
  'No spend yet': '还没有消费',
  Account: '账户',
  'Channel health': '通道健康',
  'Last 5 minutes, every instance': '最近 5 分钟，所有实例',
  Manage: '管理',
  Channel: '通道',
  State: '状态',
  Errors: '错误',
  disabled: '已停用',
  'breaker open': '熔断中',
  healthy: '正常',
} as const satisfies Record<string, string>;

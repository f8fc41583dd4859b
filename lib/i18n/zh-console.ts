// Simplified Chinese for the operator console (app/(admin), components/admin): the same `t()`
// mechanism as the dashboard (translate.ts), in a table of its own so console pages can grow
// without touching the dashboard's. Phrases the dashboard already has (zh-phrases.ts) are not repeated.

export const zhConsole = {
  // Layout and navigation
  'Operator console': '运营控制台',
  Admin: '管理',
  Accounts: '账户',
  Channels: '渠道',
  Codes: '兑换码',
  Announcements: '公告',
  'Audit log': '审计日志',

  // Overview
  'Operator overview': '运营概览',
  'Every account, every channel. Times in UTC; revenue is recharges (Stripe and codes), spend is usage.':
    '所有账户与所有渠道。时间为 UTC；收入指充值（Stripe 与兑换码），消费指用量。',
  Today: '今天',
  '{n} errors': '{n} 次错误',
  'revenue {usd} / {cny}': '收入 {usd} / {cny}',
  'spend {usd} / {cny}': '消费 {usd} / {cny}',
  'Spend, last 30 days': '消费，最近 30 天',
  '{n} req': '{n} 次',
  'By channel': '按渠道',
  'By tier': '按等级',
  'Top accounts': '消费最多的账户',
  'By spend, last 30 days': '按消费排序，最近 30 天',
  'No spend yet': '还没有消费',
  Account: '账户',
  'Channel health': '渠道健康',
  'Last 5 minutes, every instance': '最近 5 分钟，所有实例',
  Manage: '管理',
  State: '状态',
  disabled: '已停用',
  'breaker open': '熔断中',
  healthy: '正常',

  // Requests from the console
  'Request failed (HTTP {status}).': '请求失败（HTTP {status}）。',

  // Accounts
  'Search by email (any part) or paste an account id.': '按邮箱（任意部分）搜索，或粘贴账户 ID。',
  'email or id': '邮箱或 ID',
  'Search accounts': '搜索账户',
  Search: '搜索',
  'No account matches': '没有匹配的账户',
  Email: '邮箱',
  Balance: '余额',
  Created: '创建时间',
  admin: '管理员',
  '(pinned)': '（已固定）',
  active: '正常',
  suspended: '已暂停',

  // Redemption codes
  'Redemption codes': '兑换码',
  'Prepaid balance for customers who cannot pay by card. Codes are stored hashed: export them when you create them.':
    '为无法刷卡付款的客户提供预付余额。兑换码以哈希形式保存：请在创建时导出。',
  'New batch': '新建批次',
  Batches: '批次',
  'No codes yet': '还没有兑换码',
  Value: '面值',
  Redeemed: '已兑换',
  Expires: '过期时间',
  By: '创建者',
  never: '永不',
  'Value (USD)': '面值（美元）',
  Count: '数量',
  'Expires (optional)': '过期日期（可选）',
  'Create codes': '生成兑换码',
  '{n} codes of {amount} created: copy or download them now, they are not shown again.':
    '已生成 {n} 个面值 {amount} 的兑换码：请立即复制或下载，它们不会再次显示。',
  'Download CSV': '下载 CSV',

  // Page titles
  'Code batch': '兑换码批次',

  // Announcements
  "A notice shown at the top of every user's dashboard.": '显示在每位用户控制台顶部的通知。',
  'Now showing': '当前显示',
  'Posted {at} by {who}': '{who} 于 {at} 发布',
  'Nothing: dashboards show no notice.': '无：控制台不显示通知。',
  'Post a notice': '发布通知',
  'Replaces the current one.': '将替换当前通知。',
  Level: '级别',
  'Maintenance on Sunday 02:00-03:00 UTC': '周日 02:00-03:00 UTC 维护',
  info: '提示',
  warning: '警告',
  Publish: '发布',
  'Take down': '撤下',

  // Audit log
  'Every operator action and every automatic channel change, newest first. Append-only.': '每一次运营操作和每一次自动渠道变更，最新在前。只追加，不可修改。',
  'Nothing yet': '暂无记录',
  Who: '操作者',
  Action: '操作',
  Target: '对象',
  'Before → after': '之前 → 之后',

  // Logs
  "Every account's requests, newest first.": '所有账户的请求，最新在前。',
  'account email or id': '账户邮箱或 ID',
  model: '模型',
  channel: '渠道',
  'Status or outcome': '状态或结果',
  Fallback: '回退',
  'any route': '任意路由',
  'fallback only': '仅回退',
  'no fallback': '无回退',
  Filter: '筛选',
  'No requests match': '没有匹配的请求',
  'asked {model}': '请求的是 {model}',
  Older: '更早',

  // A code batch
  Code: '兑换码',
  'Redeemed by': '兑换者',
  'redeemed {at}': '已于 {at} 兑换',
  expired: '已过期',
  open: '未使用',
} as const satisfies Record<string, string>;

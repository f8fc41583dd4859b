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
  'Log export': '日志导出',
  'Operator console overview': '运营控制台概览',

  // Overview
  'Operator overview': '运营概览',
  'Every account, every channel. Windows are UTC days; revenue is recharges (Stripe and codes), spend is usage.':
    '所有账户与所有渠道。统计窗口按 UTC 日计；收入指充值（Stripe 与兑换码），消费指用量。',
  Today: '今天',
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
  'Last 5 minutes, every instance': '最近 5 分钟，所有实例',
  Manage: '管理',
  State: '状态',
  disabled: '已停用',
  'breaker open': '熔断中',

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
  admin: '管理员',
  '(pinned)': '（已固定）',
  active: '正常',
  suspended: '已暂停',

  // Redemption codes
  'Redemption codes': '兑换码',
  'Redemption code': '兑换码',
  'Region pin': '区域限定',
  'Its requests are served only by channels of this region.': '该账户的请求只由此区域的渠道处理。',
  'Any region': '任意区域',
  'Save region': '保存区域',
  'Prepaid balance for customers who cannot pay by card. Codes are stored hashed: export them when you create them.':
    '为无法刷卡付款的客户提供预付余额。兑换码以哈希形式保存：请在创建时导出。',
  'New batch': '新建批次',
  Batches: '批次',
  'No codes yet': '还没有兑换码',
  Value: '面值',
  Redeemed: '已兑换',
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
  'Redeemed by': '兑换者',
  'redeemed {at}': '已于 {at} 兑换',
  expired: '已过期',
  open: '未使用',

  // One account
  'pinned by an operator': '由运营方固定',
  'automatic promotion': '自动升级',
  user: '用户',
  'custom limits {limits}': '自定义限额 {limits}',
  'Same effect as the admin CLI, on every instance at once; each is written to the audit log.':
    '与管理命令行效果相同，立即作用于所有实例；每项操作都记入审计日志。',
  'No keys': '没有密钥',
  revoked: '已吊销',
  'Recent requests': '最近的请求',
  Ledger: '账目',
  'No entries': '没有记录',
  Kind: '类型',
  Note: '备注',
  'Operator actions on this account': '运营方对此账户的操作',
  'No operator actions yet': '还没有运营操作',

  // Account actions
  'Requests/min': '每分钟请求',
  'Requests/hour': '每小时请求',
  'Tokens/day': '每日 token',
  Concurrent: '并发',
  'Credited {amount}; balance now {balance}.': '已加款 {amount}；当前余额 {balance}。',
  'Debited {amount}; balance now {balance}.': '已扣款 {amount}；当前余额 {balance}。',
  'Why (kept in the ledger and audit log)': '原因（记入账目与审计日志）',
  Debit: '扣款',
  'Pin (no automatic promotion)': '固定（不自动升级）',
  'Save tier': '保存等级',
  "Custom limits (VIP within its range, enterprise any; empty = the tier's)": '自定义限额（VIP 在其范围内，企业版不限；留空即用等级默认值）',
  'Save limits': '保存限额',
  'Suspend this account? Every request with its API keys gets 403 (account_suspended) at once; its balance and keys are kept, and Unsuspend restores them.':
    '暂停此账户？其 API 密钥的每个请求将立即返回 403（account_suspended）；余额与密钥会保留，取消暂停即可恢复。',
  Suspend: '暂停',
  Unsuspend: '取消暂停',
  'Remove admin role': '移除管理员角色',
  'Make admin': '设为管理员',
  'Revoke this key on every instance?': '在所有实例上吊销此密钥？',

  // One request
  '(estimated)': '（估算）',
  '(first token {n} ms)': '（首个 token {n} ms）',
  'Channel (users see)': '渠道（用户所见）',
  'In order; the label in brackets is what the account sees.': '按顺序；括号中的标签是账户看到的名称。',
  'None: the request was answered before any upstream call.': '无：请求在调用上游之前就已答复。',
  'Upstream attempts': '上游尝试',
  succeeded: '成功',
  '{i} in · {o} out': '输入 {i} · 输出 {o}',
  '{n} cache read': '缓存读取 {n}',
  'Model asked': '请求的模型',
  'Last channel tried': '最后尝试的渠道',
  Route: '路由',

  // Channels
  'Live state across instances (request figures: last 5 minutes). Disable, enable, weight and limits take effect on every instance within a second and survive restarts.':
    '各实例的实时状态（请求数据：最近 5 分钟）。停用、启用、权重与限制在一秒内对所有实例生效，重启后仍保留。',
  'Req/min': '请求/分钟',
  'Priority · weight': '优先级 · 权重',
  Controls: '操作',
  'key {hint}': '密钥 {hint}',
  'disabled (auto)': '已停用（自动）',
  enabled: '已启用',
  'breaker open on {n}/{of}': '熔断：{n}/{of} 个实例打开',
  'breaker closed (1 instance)': '熔断关闭（1 个实例）',
  'breaker closed ({n} instances)': '熔断关闭（{n} 个实例）',
  '{n} failures in a row': '连续失败 {n} 次',
  'Disable channel "{name}" on every instance? {effect}': '在所有实例上停用渠道“{name}”？{effect}',
  'No other enabled channel serves {models}: every request for it will fail ("All upstream channels failed") until you enable this channel again.':
    '没有其他已启用的渠道提供 {models}：在重新启用此渠道之前，对它的每个请求都会失败（"All upstream channels failed"）。',
  'No other enabled channel serves {models}: every request for them will fail ("All upstream channels failed") until you enable this channel again.':
    '没有其他已启用的渠道提供 {models}：在重新启用此渠道之前，对它们的每个请求都会失败（"All upstream channels failed"）。',
  'Its traffic moves to the other enabled channels of its models.': '其流量将转到这些模型的其他已启用渠道。',
  Enable: '启用',
  Disable: '停用',
  weight: '权重',
  'Weight override for {name}': '{name} 的权重覆盖',
  'Set weight': '设置权重',
  Test: '测试',
  OK: '正常',

  // Channel limits
  'Channel limits': '渠道限制',
  "Requests in flight and tokens per minute (input and output) each channel may take, across every instance. A value set here replaces the operator config's on every instance within a second and survives restarts; a channel at its limit is skipped for the model's other channels.":
    '每个渠道在所有实例上可同时处理的请求数与每分钟 token 数（输入加输出）。此处设置的值会在一秒内替换所有实例上运营配置中的值，重启后仍保留；达到限制的渠道会被跳过，改用该模型的其他渠道。',
  'In flight': '进行中',
  'Tokens this minute': '本分钟 token 数',
  'no limit (not counted)': '不限（不计数）',
  '{n} of {limit}': '{n} / {limit}',
  'set in the console': '在控制台设置',
  'from the config': '来自运营配置',
  Concurrency: '并发数',
  'no limit': '不限',
  'Config: no limit. Empty: the config.': '运营配置：不限。留空：使用运营配置。',
  'Config: {n}. Empty: the config.': '运营配置：{n}。留空：使用运营配置。',
  'Use the config': '使用运营配置',
  '{field}: {from} → {to} (now {current})': '{field}：{from} → {to}（当前 {current}）',
  'Tighten the limits of channel "{name}" on every instance? {changes}. Requests beyond them go to the other channels of their model, or get a 429 naming this channel when none has room.':
    '在所有实例上收紧渠道“{name}”的限制？{changes}。超出的请求将转到该模型的其他渠道；若都没有余量，则返回指明此渠道的 429。',
  'UTC months, exact sums of the ledger; the same statement the account sees.': '按 UTC 月份，账目的精确合计；与账户自己看到的账单相同。',
  // Single sign-on (app/(admin)/admin/sso)
  'Providers are set in the environment (OIDC_*, GITHUB_*, GOOGLE_*); secrets are never shown.':
    '提供方在环境变量中配置（OIDC_*、GITHUB_*、GOOGLE_*）；密钥从不显示。',
  Providers: '提供方',
  'not configured': '未配置',
  Issuer: '签发方',
  'Client ID': '客户端 ID',
  'Callback URL to register with the provider': '需在提供方登记的回调地址',
  'SSO-required domains': '要求单点登录的域名',
  'Password log-in is refused for addresses at these domains. Releasing one is written to the audit log.':
    '这些域名下的地址不能用密码登录。解除某个域名会写入审计日志。',
  'No organization requires SSO.': '没有组织要求单点登录。',
  Release: '解除',
  'Release {domain} from {org}? Password log-in works again for its addresses.': '从 {org} 解除 {domain}？其地址将可再次用密码登录。',
} as const satisfies Record<string, string>;

// Messages the server composes (API errors, field errors, alert lines, attempt reasons): a stable
// code, its parameters and one English and one Chinese template each. The server sends the code and
// the parameters beside its English `message`; the pages render them in the reader's language
// (`renderMessage`). English here is the API's `message`, word for word. Client-safe, no imports:
// lib/errors.ts builds its messages from it. To add one: a code, `en` and `zh` (a unit test checks
// both are there and name the same parameters).

export type MessageParams = Record<string, string | number>;

const table = {
  // Reconciliation: a provider's usage export (lib/admin/reconcile.ts)
  'reconcile.too_large': { en: 'The export is over {max} bytes.', zh: '导出文件超过 {max} 字节。' },
  'reconcile.empty': { en: 'The export is empty.', zh: '导出文件为空。' },
  'reconcile.format': {
    en: 'Not an OpenAI or Anthropic usage export: the header has neither input_tokens (OpenAI) nor uncached_input_tokens (Anthropic).',
    zh: '不是 OpenAI 或 Anthropic 的用量导出：表头既没有 input_tokens（OpenAI）也没有 uncached_input_tokens（Anthropic）。',
  },
  'reconcile.column': { en: 'The export has no {column} column.', zh: '导出文件缺少 {column} 列。' },
  'reconcile.number': { en: 'Line {line}: {column} is not a token count.', zh: '第 {line} 行：{column} 不是有效的 token 数。' },
  'reconcile.day': { en: 'Line {line}: the day is not a date or a unix time.', zh: '第 {line} 行：日期既不是日期也不是 Unix 时间。' },
  'reconcile.channel': { en: 'No channel is named {channel}.', zh: '没有名为 {channel} 的渠道。' },
  'key.response_cache_ttl': {
    en: 'response_cache_ttl_seconds must be a whole number of seconds from 1 to {max}, or null.',
    zh: 'response_cache_ttl_seconds 必须是 1 到 {max} 之间的整数秒，或 null。',
  },
  'reconcile.output_format': { en: 'format must be json or csv.', zh: 'format 必须是 json 或 csv。' },
  // Plans and subscriptions (lib/plans)
  'plan.unknown': { en: 'No plan is named {plan}.', zh: '没有名为 {plan} 的套餐。' },
  'plan.days': { en: 'days must be a whole number from 1 to {max}.', zh: 'days 必须是 1 到 {max} 之间的整数。' },
  'plan.none': { en: 'This account has no active plan.', zh: '此账户没有生效中的套餐。' },
  'plan.window_exhausted': {
    en: 'Plan allowance used up: the {window} window of {plan} ({limit}) resets at {reset}. Usage beyond it is not billed to the balance on this plan.',
    zh: '套餐额度已用完：{plan} 的 {window} 窗口（{limit}）将于 {reset} 重置。此套餐超出部分不从余额扣费。',
  },
  'plan.code_empty': { en: 'A code carries an amount, a plan, or both.', zh: '兑换码须包含金额、套餐或两者。' },
  'plan.stripe_managed': {
    en: 'This plan is billed by Stripe: change or cancel it in the billing portal.',
    zh: '此套餐由 Stripe 计费：请在账单门户中变更或取消。',
  },
  // Plans paid with Stripe Billing (lib/plans/stripe.ts)
  'plan.required': { en: 'plan is required: the id of a plan.', zh: 'plan 为必填项：套餐的 id。' },
  'plan.not_subscribable': {
    en: 'The plan {plan} cannot be bought with a card here (it has no Stripe price); it is granted by code or by the operator.',
    zh: '套餐 {plan} 不能在此刷卡购买（未配置 Stripe 价格），只能通过兑换码或由运营者授予。',
  },
  'plan.already_subscribed': { en: 'This account already subscribes to {plan}.', zh: '此账户已订阅 {plan}。' },
  'plan.no_stripe_customer': {
    en: 'This account has no Stripe billing yet: subscribe to a plan first.',
    zh: '此账户尚无 Stripe 账单信息：请先订阅套餐。',
  },
  // Sessions, bodies, throttles (every /api route)
  'auth.sign_in_first': { en: 'Sign in first.', zh: '请先登录。' },
  'auth.invalid_credentials': { en: 'Invalid email or password.', zh: '邮箱或密码不正确。' },
  'auth.account_suspended': { en: 'This account is suspended.', zh: '此账户已被暂停，请联系客服恢复访问。' },
  'auth.suspended_read_only': {
    en: 'This account is suspended: it can still read its data, but not create keys, recharge or change anything.',
    zh: '此账户已被暂停：仍可查看数据，但不能创建密钥、充值或做任何修改。',
  },
  'auth.email_invalid': { en: 'Enter a valid email address.', zh: '请输入有效的邮箱地址。' },
  'auth.email_taken': { en: 'An account with this email already exists.', zh: '该邮箱已注册。' },
  'auth.password_short': { en: 'Password must be at least {n} characters.', zh: '密码至少需要 {n} 个字符。' },
  'auth.password_long': { en: 'Password must be at most {n} characters.', zh: '密码最多 {n} 个字符。' },
  'auth.password_common': {
    en: 'This password is one of the most commonly used ones. Choose another: a few unrelated words work well.',
    zh: '这是最常用的密码之一，请换一个：几个不相关的词组合起来就很好。',
  },
  'auth.current_password_missing': { en: 'Enter your current password.', zh: '请输入当前密码。' },
  'auth.current_password_wrong': { en: 'The current password is not right.', zh: '当前密码不正确。' },
  'auth.new_password_missing': { en: 'Enter a new password.', zh: '请输入新密码。' },
  'auth.throttled_address': {
    en: 'Too many failed sign-in attempts from this address. Try again in {seconds} s.',
    zh: '此地址登录失败次数过多，请 {seconds} 秒后重试。',
  },
  'auth.throttled_account': {
    en: 'Too many failed sign-in attempts for this email from this address. Try again in {seconds} s.',
    zh: '此账户从该地址登录失败次数过多，请 {seconds} 秒后重试。',
  },
  // Mail, password reset, email verification (lib/mail, lib/auth/password-reset.ts, lib/auth/email-verification.ts)
  'mail.not_configured': {
    en: 'Mail is not set up on this gateway: ask its operator to set your password.',
    zh: '此网关未配置邮件发送：请联系运营者为你设置密码。',
  },
  'mail.not_sent': { en: 'The mail could not be sent. Try again in a few minutes.', zh: '邮件发送失败，请几分钟后重试。' },
  'auth.reset_throttled': {
    en: 'Too many reset links were asked for this email. Try again in {seconds} s.',
    zh: '此邮箱请求重置链接的次数过多，请 {seconds} 秒后重试。',
  },
  'auth.reset_invalid': {
    en: 'This reset link is not valid or was already used. Ask for a new one.',
    zh: '此重置链接无效或已被使用，请重新申请。',
  },
  'auth.reset_expired': { en: 'This reset link has expired. Ask for a new one.', zh: '此重置链接已过期，请重新申请。' },
  'email.unverified': {
    en: 'Verify your email address first: open the link we mailed you (or send it again from the billing page). Until then codes, recharges and plans are not available.',
    zh: '请先验证邮箱：打开我们发给你的邮件中的链接（或在账单页面重新发送）。验证前不能兑换、充值或购买套餐。',
  },
  // Log and usage filters (dashboard pages, /api/logs, /api/usage and their exports)
  'filter.status': {
    en: 'status must be ok, error, client_closed, an HTTP status (429) or a class (5xx).',
    zh: '状态须为 ok、error、client_closed、HTTP 状态码（如 429）或状态类（如 5xx）。',
  },
  'filter.tz': { en: 'tz must be an IANA time zone such as Asia/Shanghai or UTC.', zh: 'tz 须为 IANA 时区，例如 Asia/Shanghai 或 UTC。' },
  'filter.bound': {
    en: '{name} must be a date (YYYY-MM-DD) or an ISO timestamp (2026-03-15T10:00:00Z) between 1970 and 9999.',
    zh: '{name} 须为 1970 至 9999 年之间的日期（YYYY-MM-DD）或 ISO 时间戳（2026-03-15T10:00:00Z）。',
  },
  'filter.key': { en: 'key must be an API key id.', zh: 'key 须为 API 密钥 ID。' },
  'filter.model_long': { en: 'model is too long.', zh: '模型名称过长。' },
  'filter.model_control': { en: 'model must not contain control characters.', zh: '模型名称不能包含控制字符。' },
  'filter.from_before_to': { en: 'from must be before to.', zh: '开始时间必须早于结束时间。' },
  'filter.limit': { en: 'limit must be an integer from 1 to {max}.', zh: 'limit 须为 1 到 {max} 之间的整数。' },
  'filter.cursor': {
    en: '{name} is not a valid cursor. Use next_cursor or prev_cursor of a previous page.',
    zh: '{name} 不是有效的分页游标，请使用上一页返回的 next_cursor 或 prev_cursor。',
  },
  'usage.day': { en: '{name} must be a day as YYYY-MM-DD (UTC).', zh: '{name} 须为 YYYY-MM-DD 格式的日期（UTC）。' },
  'usage.from_after_to': { en: 'from must not be after to.', zh: '开始日期不能晚于结束日期。' },
  'usage.range': { en: 'The range may span at most {days} days.', zh: '时间范围最多 {days} 天。' },
  'usage.group_by': { en: 'group_by must be day, model or key.', zh: 'group_by 须为 day、model 或 key。' },
  'key.region': {
    en: 'region must be a region name such as cn, eu or us (lower-case letters, digits and dashes), or null.',
    zh: '区域须为区域名称（如 cn、eu、us，仅小写字母、数字和连字符），或为 null。',
  },
  // Operator console (lib/admin)
  'admin.no_account': { en: 'No such account.', zh: '没有这个账户。' },
  'admin.no_request': { en: 'No such request.', zh: '没有这条请求。' },
  'admin.sso_domain_not_found': { en: 'No organization requires SSO for {domain}.', zh: '没有组织对 {domain} 要求单点登录。' },
  'admin.operator_only': { en: 'This needs an operator (admin) account.', zh: '此操作需要运营（管理员）账户。' },
  'admin.amount_zero': { en: 'The amount must not be zero.', zh: '金额不能为零。' },
  'admin.note_long': { en: 'The note is at most 500 characters.', zh: '备注最多 500 个字符。' },
  'admin.debit_exceeds': { en: 'A debit of {amount} exceeds the balance ({balance}).', zh: '扣减 {amount} 超过了余额（{balance}）。' },
  'admin.log_account': { en: 'account must be an account id or an email.', zh: '账户须为账户 ID 或邮箱。' },
  'admin.log_channel': { en: 'channel is not a channel name.', zh: '这不是渠道名称。' },
  'admin.channel_limit': {
    en: "{field} must be a whole number from {min} to {max}, or empty for the operator config's limit.",
    zh: '{field} 必须是 {min} 到 {max} 之间的整数；留空则使用运营配置中的限制。',
  },
  'admin.log_fallback': { en: 'fallback must be 1 or 0.', zh: 'fallback 须为 1 或 0。' },
  'admin.role_unknown': { en: 'Unknown role "{role}". Roles: user, admin.', zh: '未知角色“{role}”。可选角色：user、admin。' },
  // Payments (Stripe)
  'billing.amount_invalid': { en: 'Field "amount_usd" must be an amount in USD, e.g. 20 or "20.00".', zh: '充值金额须为美元金额，例如 20 或 "20.00"。' },
  'billing.amount_range': { en: 'Recharge amount must be between {min} and {max}.', zh: '充值金额须在 {min} 到 {max} 之间。' },
  'billing.amount_cents': { en: 'Recharge amount must be in whole cents.', zh: '充值金额须精确到分。' },
  'billing.not_configured': { en: 'Payments are not set up on this deployment.', zh: '此部署尚未开通在线支付。' },
  'billing.checkout_failed': { en: 'Stripe could not start the checkout. Try again in a moment.', zh: 'Stripe 暂时无法发起支付，请稍后重试。' },
  'billing.checkout_no_url': { en: 'Stripe did not return a checkout URL.', zh: 'Stripe 未返回支付页面地址。' },
  // Statements and receipts (lib/statements)
  'statement.month_invalid': { en: 'month must be a month written YYYY-MM, e.g. 2026-11.', zh: 'month 须为 YYYY-MM 格式的月份，例如 2026-11。' },
  'statement.month_future': { en: 'The month {month} has not begun yet.', zh: '{month} 月尚未开始。' },
  'statement.format_invalid': {
    en: 'A statement is YYYY-MM.csv, YYYY-MM.pdf or YYYY-MM (JSON).',
    zh: '账单须为 YYYY-MM.csv、YYYY-MM.pdf 或 YYYY-MM（JSON）。',
  },
  'statement.account_not_found': { en: 'No such account.', zh: '没有这个账户。' },
  'receipt.not_found': { en: 'No such paid recharge.', zh: '没有这笔已支付的充值。' },
  'billing.portal_failed': { en: 'Stripe could not open the billing portal. Try again in a moment.', zh: 'Stripe 暂时无法打开账单门户，请稍后重试。' },
  'billing.bad_signature': { en: 'Invalid Stripe signature', zh: 'Stripe 签名无效' },
  // API keys and sessions on /v1 (the playground shows them)
  'key.invalid_throttled': {
    en: 'Too many requests with invalid API keys from this address. Check the key, and retry later.',
    zh: '此地址使用无效 API 密钥的请求过多，请检查密钥后稍后重试。',
  },
  'key.invalid': { en: 'Invalid or revoked API key.', zh: 'API 密钥无效或已撤销。' },
  'key.missing': { en: 'Missing API key. Send it as "Authorization: Bearer <key>".', zh: '缺少 API 密钥，请以 "Authorization: Bearer <key>" 发送。' },
  'key.malformed': { en: 'Malformed API key.', zh: 'API 密钥格式不正确。' },
  'key.cannot_verify': { en: 'The gateway cannot verify this key right now. Please retry shortly.', zh: '网关暂时无法验证此密钥，请稍后重试。' },
  'session.cannot_verify': { en: 'The gateway cannot verify this session right now. Please retry shortly.', zh: '网关暂时无法验证当前会话，请稍后重试。' },
  'session.ended': { en: 'This session has ended. Sign in again.', zh: '此会话已结束，请重新登录。' },
  'playground.expired': {
    en: 'The playground session credential has expired. Reload the playground.',
    zh: '演练场的会话凭据已过期，请重新加载演练场。',
  },
  'playground.wrong_page': {
    en: 'The playground credential is only accepted from the playground page of this site.',
    zh: '演练场凭据只能在本站的演练场页面使用。',
  },
  'playground.wrong_session': {
    en: 'The playground credential is only accepted with the session it was issued for. Sign in again.',
    zh: '演练场凭据只能配合签发它的会话使用，请重新登录。',
  },
  // Organizations, members, invitations (issue 41, docs/decisions/040)
  'org.not_member': { en: 'You are not a member of this organization.', zh: '你不是该组织的成员。' },
  'org.role_refused': { en: 'Your role in this organization ({role}) does not allow this.', zh: '你在该组织中的角色（{role}）不允许此操作。' },
  'org.own_keys_only': { en: 'A developer can only use their own keys and their logs.', zh: '开发者只能使用自己创建的密钥及其日志。' },
  'org.name_invalid': { en: 'An organization name is 1 to 80 characters.', zh: '组织名称须为 1 到 80 个字符。' },
  'org.not_found': { en: 'No such organization.', zh: '没有这个组织。' },
  'org.member_not_found': { en: 'No such member.', zh: '没有这个成员。' },
  'org.role_invalid': { en: 'Role must be one of owner, admin, developer, billing.', zh: '角色必须是 owner、admin、developer、billing 之一。' },
  'org.owner_only': { en: 'Only the owner can do this.', zh: '只有所有者可以执行此操作。' },
  'org.owner_stays': {
    en: 'The owner cannot be removed or demoted: transfer ownership first.',
    zh: '不能移除或降级所有者：请先转让所有权。',
  },
  'org.already_member': { en: 'This person is already a member.', zh: '此人已是成员。' },
  'org.invite_invalid': { en: 'This invitation link is not valid.', zh: '此邀请链接无效。' },
  'org.invite_expired': { en: 'This invitation has expired or was revoked.', zh: '此邀请已过期或已被撤销。' },
  'org.invite_email_mismatch': {
    en: 'This invitation is for {email}. Sign in with that address to accept it.',
    zh: '此邀请发给 {email}，请用该邮箱登录后接受。',
  },
  'org.personal': { en: 'A personal account is not an organization: create one first.', zh: '个人账户不是组织，请先创建组织。' },
  // Single sign-on (lib/auth/sso.ts, lib/orgs/sso.ts; docs/decisions/052)
  'auth.sso_required': {
    en: 'Accounts at {domain} sign in through single sign-on (SSO): use the SSO button instead of a password.',
    zh: '{domain} 的账户须通过单点登录（SSO）登录：请使用 SSO 按钮，不能用密码登录。',
  },
  'org.sso_domains_invalid': { en: 'domains must be a list of at most {max} email domains.', zh: 'domains 必须是最多 {max} 个邮箱域名的列表。' },
  'org.sso_domain_invalid': { en: '{domain} is not an email domain such as example.com.', zh: '{domain} 不是 example.com 这样的邮箱域名。' },
  'org.sso_domain_public': {
    en: '{domain} is a public email service: no organization can require SSO for it.',
    zh: '{domain} 是公共邮箱服务，任何组织都不能为其要求 SSO。',
  },
  'org.sso_domain_unproven': {
    en: 'To require SSO for {domain}, first sign in through SSO with a verified address at {domain}.',
    zh: '要为 {domain} 要求 SSO，请先用 {domain} 下已验证的邮箱通过 SSO 登录一次。',
  },
  'org.sso_domain_taken': { en: 'Another organization already requires SSO for {domain}.', zh: '另一个组织已为 {domain} 要求 SSO。' },
  'org.budget_invalid': { en: 'monthly_budget_usd must be a non-negative amount or null.', zh: '每月预算必须是非负金额或留空。' },
  'request.rate_limited': { en: 'Rate limit exceeded: {what}. Try again in {seconds} s.', zh: '操作过于频繁，请 {seconds} 秒后重试。' },
  'request.cross_site': {
    en: 'Cross-site request refused: the Origin (or Referer) of a state-changing request must be this site.',
    zh: '已拒绝跨站请求：修改类请求必须来自本站。',
  },
  'request.cross_site_no_origin': {
    en: 'Cross-site request refused: the Origin (or Referer) of a state-changing request must be this site. This request has neither.',
    zh: '已拒绝跨站请求：修改类请求必须来自本站。',
  },
  'request.not_json': { en: 'Send a JSON body with Content-Type: application/json.', zh: '请求必须是 JSON（Content-Type: application/json）。' },
  'request.too_large': { en: 'Request body too large.', zh: '请求内容过大。' },
  'request.invalid_json': { en: 'The request body is not valid JSON.', zh: '请求内容不是有效的 JSON。' },
  'request.not_object': { en: 'The request body must be a JSON object.', zh: '请求内容必须是 JSON 对象。' },
  'request.field_required': { en: 'Field "{field}" is required and must be a string.', zh: '必须填写“{field}”。' },
  'request.invalid_field': { en: '{field}: {detail}', zh: '“{field}”的值无效。' },
  'request.invalid_fields': { en: 'Check the fields marked below.', zh: '请检查下方标出的字段。' },

  // Redeem codes
  'redeem.invalid': { en: 'This code is not valid.', zh: '兑换码无效。' },
  'redeem.used': { en: 'This code has already been redeemed.', zh: '此兑换码已被使用。' },
  'redeem.expired': { en: 'This code expired on {date}.', zh: '此兑换码已于 {date} 过期。' },
  'redeem.batch_not_found': { en: 'No such batch.', zh: '没有这个批次。' },
  'redeem.expiry_format': { en: 'The expiry must be an ISO-8601 date or date-time.', zh: '有效期必须是日期或日期时间。' },
  'redeem.expiry_past': { en: 'The expiry must be in the future.', zh: '有效期必须晚于现在。' },
  'redeem.amount': { en: 'A code is worth more than $0 and at most $10,000.', zh: '每个兑换码的面值须大于 $0 且不超过 $10,000。' },
  'redeem.count': { en: 'A batch holds 1 to {max} codes.', zh: '每批可生成 1 到 {max} 个兑换码。' },

  // Projects (lib/projects)
  'project.not_found': { en: 'No such project.', zh: '没有这个项目。' },
  'project.not_in_account': {
    en: 'project_id must be the id of a project of this account, or null.',
    zh: 'project_id 必须是本账户某个项目的 id，或留空。',
  },
  'project.too_many': { en: 'This account already has {cap} projects, the most it may hold.', zh: '此账户已有 {cap} 个项目，已达上限。' },

  // API keys
  'key.not_found': { en: 'No such key.', zh: '没有这把密钥。' },
  'key.revoked': { en: 'This key is revoked: its controls can no longer change.', zh: '此密钥已吊销，其设置不能再修改。' },
  'key.too_many': {
    en: 'This account already has {live} API keys, the most it may hold ({cap}). Revoke keys it no longer uses first.',
    zh: '此账户已有 {live} 把 API 密钥，已达上限（{cap}）。请先吊销不再使用的密钥。',
  },
  // Field errors of the key form: said in words, shown next to the field.
  'field.name': { en: 'Give the key a name of 1 to 64 characters.', zh: '请填写 1 到 64 个字符的名称。' },
  'field.budget': {
    en: 'Enter an amount in USD, such as 25 or 12.50, or leave it empty for no budget.',
    zh: '请输入美元金额（如 25 或 12.50），留空表示不设预算。',
  },
  'field.budget_decimals': {
    en: 'Enter an amount in USD with at most 12 decimals, such as 25 or 12.50.',
    zh: '请输入最多 12 位小数的美元金额，如 25 或 12.50。',
  },
  'field.budget_positive': { en: 'The budget must be more than $0; leave it empty for no budget.', zh: '预算必须大于 $0；留空表示不设预算。' },
  'field.budget_max': { en: 'The budget can be at most {max}.', zh: '预算最多为 {max}。' },
  'field.models': { en: 'Choose at most {max} models.', zh: '最多选择 {max} 个模型。' },
  'field.model_unknown': { en: 'There is no model named "{model}".', zh: '没有名为“{model}”的模型。' },
  'field.rpm': {
    en: 'Enter a whole number of requests per minute from 1 to 1,000,000, or leave it empty.',
    zh: '请输入 1 到 1,000,000 之间的每分钟请求数（整数），或留空。',
  },
  'field.tpm': {
    en: 'Enter a whole number of tokens per minute (input + output) from 1 to 1,000,000,000, or leave it empty.',
    zh: '请输入 1 到 1,000,000,000 之间的每分钟 token 数（输入 + 输出，整数），或留空。',
  },
  'field.concurrency': {
    en: 'Enter a whole number of concurrent requests from 1 to 100,000, or leave it empty.',
    zh: '请输入 1 到 100,000 之间的并发请求数（整数），或留空。',
  },
  'field.ips': { en: 'List at most {max} addresses or ranges.', zh: '最多填写 {max} 个地址或地址段。' },
  'field.ip_invalid': {
    en: '"{value}" is not an IPv4 or IPv6 address or range (such as 203.0.113.0/24).',
    zh: '“{value}”不是有效的 IPv4/IPv6 地址或地址段（如 203.0.113.0/24）。',
  },
  'field.expires': { en: 'Enter a date and time, or leave it empty for a key that never expires.', zh: '请输入日期和时间，留空表示永不过期。' },
  'field.expires_past': { en: 'The expiry must be in the future (revoke the key to stop it now).', zh: '过期时间必须晚于现在（要立即停用请吊销密钥）。' },
  'field.thresholds': {
    en: 'List at most {max} whole percentages from 1 to 100, such as 50, 80, 100.',
    zh: '请填写最多 {max} 个 1 到 100 之间的整数百分比，如 50, 80, 100。',
  },
  'field.low_balance': {
    en: 'Enter an amount in USD more than 0 and at most {max}, such as 5 or 2.50, or leave it empty.',
    zh: '请输入大于 0 且不超过 {max} 的美元金额（如 5 或 2.50），或留空。',
  },
  'field.webhook_url': { en: 'Enter a public https:// address, or leave it empty.', zh: '请输入公网可访问的 https:// 地址，或留空。' },
  'field.invalid': { en: 'This value is not valid.', zh: '此项填写不正确。' },
  // Field errors derived from a route's schema (lib/schemas/fields.ts), where the field has no words of its own.
  'field.required': { en: '{field} is required.', zh: '必须填写“{field}”。' },
  'field.type': { en: '{field} must be of type {expected}.', zh: '“{field}”的类型须为 {expected}。' },
  'field.too_short': { en: '{field} must be at least {min} characters.', zh: '“{field}”至少 {min} 个字符。' },
  'field.too_long': { en: '{field} must be at most {max} characters.', zh: '“{field}”最多 {max} 个字符。' },
  'field.list_short': { en: '{field} must list at least {min} entries.', zh: '“{field}”至少需要 {min} 项。' },
  'field.list_long': { en: '{field} may list at most {max} entries.', zh: '“{field}”最多 {max} 项。' },
  'field.min': { en: '{field} must be at least {min}.', zh: '“{field}”不能小于 {min}。' },
  'field.max': { en: '{field} must be at most {max}.', zh: '“{field}”不能大于 {max}。' },
  'field.one_of': { en: '{field} must be one of: {values}.', zh: '“{field}”须为以下之一：{values}。' },
  'field.format': { en: '{field} is not a valid {format}.', zh: '“{field}”的格式不正确（{format}）。' },
  'field.unknown': { en: 'Unknown field {field}.', zh: '未知字段“{field}”。' },
  'field.not_valid': { en: '{field} is not valid.', zh: '“{field}”的值无效。' },

  // Alerts (banner, alert history)
  'alert.not_found': { en: 'No such alert.', zh: '没有这条提醒。' },
  'alert.balance_low': { en: 'Balance {balance} is below your alert threshold of {threshold}.', zh: '余额 {balance} 已低于提醒阈值 {threshold}。' },
  'alert.key_budget_lifetime': {
    en: 'API key "{key}" has used {percent}% of its lifetime budget: {spent} of {budget}.',
    zh: 'API 密钥“{key}”已用掉总预算的 {percent}%：{budget} 中的 {spent}。',
  },
  'alert.key_budget_monthly': {
    en: 'API key "{key}" has used {percent}% of its monthly budget ({period}): {spent} of {budget}.',
    zh: 'API 密钥“{key}”已用掉 {period} 月预算的 {percent}%：{budget} 中的 {spent}。',
  },
  'alert.project_budget_monthly': {
    en: 'Project "{name}" has used {percent}% of its monthly budget ({period}): {spent} of {budget}.',
    zh: '项目“{name}”已用掉 {period} 月预算的 {percent}%：{budget} 中的 {spent}。',
  },
  'alert.member_budget_monthly': {
    en: 'Member {name} has used {percent}% of their monthly budget ({period}): {spent} of {budget}.',
    zh: '成员 {name} 已用掉 {period} 月预算的 {percent}%：{budget} 中的 {spent}。',
  },

  // Attempt reasons in the request log (lib/gateway/context.ts and pipeline.ts record them in English)
  'attempt.upstream_status': { en: 'upstream answered {status}', zh: '上游返回 {status}' },
  'attempt.upstream_limited': { en: 'upstream rate-limited or overloaded ({status})', zh: '上游限流或过载（{status}）' },
  'attempt.upstream_refused_key': { en: "upstream refused the channel's key or account ({status})", zh: '上游拒绝了该通道的密钥或账户（{status}）' },
  'attempt.upstream_refused_account': { en: "upstream refused the channel's account ({status})", zh: '上游拒绝了该通道的账户（{status}）' },
  'attempt.timeout': { en: 'upstream timed out ({detail})', zh: '上游超时（{detail}）' },
  'attempt.connect': { en: 'upstream connection failed ({detail})', zh: '连接上游失败（{detail}）' },
  'attempt.closed': { en: 'upstream reply closed before it was read', zh: '上游回复在读取前已关闭' },
  'attempt.too_large': { en: 'upstream reply larger than {bytes} bytes', zh: '上游回复超过 {bytes} 字节' },
  'attempt.stream_too_long': { en: 'upstream stream longer than {bytes} bytes', zh: '上游流超过 {bytes} 字节' },
  'attempt.unusable': { en: 'upstream reply unusable', zh: '上游回复无法使用' },
  'attempt.stream_empty': { en: 'upstream stream ended without data', zh: '上游流未返回任何数据即结束' },
  'attempt.stream_incomplete': { en: 'upstream stream ended before the reply was complete', zh: '上游流在回复完成前结束' },
  'attempt.other': { en: '{detail}', zh: '上游错误：{detail}' },

  // What a page says for an error the server sent without a code of its own (by its `error.code`).
  'generic.invalid_request': { en: 'The request was not accepted. Check the values and try again.', zh: '请求未被接受，请检查填写内容后重试。' },
  'generic.unauthenticated': { en: 'Your session has expired. Log in again.', zh: '登录已过期，请重新登录。' },
  'generic.forbidden': { en: 'This is not allowed for your account.', zh: '你的账户无权执行此操作。' },
  'generic.not_found': { en: 'Not found: it may have been removed.', zh: '未找到，可能已被删除。' },
  'generic.conflict': { en: 'This conflicts with the current state. Reload the page and try again.', zh: '与当前状态冲突，请刷新页面后重试。' },
  'generic.rate_limited': { en: 'Too many requests. Wait a moment and try again.', zh: '请求过于频繁，请稍后重试。' },
  'generic.unavailable': { en: 'The service is unavailable right now. Try again in a moment.', zh: '服务暂时不可用，请稍后重试。' },
  'generic.failed': { en: 'Something went wrong. Try again in a moment.', zh: '出错了，请稍后重试。' },
} as const satisfies Record<string, { en: string; zh: string }>;

export type MessageCode = keyof typeof table;
export const messageCodes = Object.keys(table) as MessageCode[];
export const messageTemplates: Record<MessageCode, { en: string; zh: string }> = table;

/** `{name}` placeholders filled from `params`; an unknown one stays as written. */
export function fillTemplate(text: string, params?: MessageParams): string {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** The English text of a code: what the API's `message` says. */
export function englishMessage(code: MessageCode, params?: MessageParams): string {
  return fillTemplate(table[code].en, params);
}

export function isMessageCode(code: unknown): code is MessageCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(table, code);
}

/** What an error or field error carries: a code and its parameters beside the English message. */
export interface CodedMessage {
  message?: string;
  message_code?: string;
  params?: MessageParams;
}

/**
 * A server message in `locale` ('en' | 'zh-CN'). An unknown code (a newer server) falls back to
 * the English message, then to `fallback`.
 */
export function renderMessage(locale: string, m: CodedMessage | null | undefined, fallback = ''): string {
  if (m && isMessageCode(m.message_code)) {
    const t = table[m.message_code];
    return fillTemplate(locale === 'zh-CN' ? t.zh : t.en, m.params);
  }
  return m?.message || fallback;
}

/** The code of a sign-up rule's refusal (lib/password-rules.ts), whose text is its English. */
export function ruleCode(problem: string): { code: MessageCode; params?: MessageParams } | null {
  const min = /^Password must be at least (\d+) characters\.$/.exec(problem);
  if (min) return { code: 'auth.password_short', params: { n: Number(min[1]) } };
  const max = /^Password must be at most (\d+) characters\.$/.exec(problem);
  if (max) return { code: 'auth.password_long', params: { n: Number(max[1]) } };
  if (problem === table['auth.password_common'].en) return { code: 'auth.password_common' };
  if (problem === table['auth.email_invalid'].en) return { code: 'auth.email_invalid' };
  return null;
}

/** What a placeholder of an attempt reason matches when read back: a number, or any text. */
const attemptParam: Record<string, string> = { status: '(\\d+)', bytes: '(\\d+)', detail: '(.*)' };

/**
 * Attempt reasons as the gateway records them (plain English), read back into codes: each pattern
 * is its code's English template, so the two cannot drift apart. `attempt.other` is the rest.
 */
const attemptPatterns: [RegExp, MessageCode, string[]][] = messageCodes
  .filter((code) => code.startsWith('attempt.') && code !== 'attempt.other')
  .map((code) => {
    const names: string[] = [];
    const source = table[code].en
      .split(/\{(\w+)\}/)
      .map((part, i) => {
        if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(part);
        return attemptParam[part];
      })
      .join('');
    return [new RegExp(`^${source}$`), code, names];
  });

/** The code of an attempt's recorded reason; an upstream's own text is `attempt.other` with it as `detail`. */
export function attemptReason(text: string): { message_code: MessageCode; params: MessageParams; message: string } {
  for (const [re, code, names] of attemptPatterns) {
    const m = re.exec(text);
    if (m) return { message_code: code, params: Object.fromEntries(names.map((n, i) => [n, m[i + 1]])), message: text };
  }
  return { message_code: 'attempt.other', params: { detail: text }, message: text };
}

/** The dashboard API's error envelope as a page reads it (lib/errors.ts apiErrorBody). */
export interface ApiErrorJson {
  error?: CodedMessage & { code?: string; fields?: (CodedMessage & { field: string })[] };
}

function genericCode(code: string | undefined, status: number): MessageCode {
  if (code === 'invalid_request' || code === 'invalid_json' || code === 'body_too_large' || code === 'unsupported_media_type') return 'generic.invalid_request';
  if (code === 'unauthenticated' || status === 401) return 'generic.unauthenticated';
  if (code === 'not_found' || status === 404) return 'generic.not_found';
  if (code === 'conflict' || status === 409) return 'generic.conflict';
  if (code === 'rate_limit_exceeded' || status === 429) return 'generic.rate_limited';
  if (status === 403) return 'generic.forbidden';
  if (status === 503) return 'generic.unavailable';
  return 'generic.failed';
}

/**
 * The text of a dashboard API error in `locale`: the coded message, else (in Chinese) a general
 * sentence for its error code, so that no English API text reaches a Chinese page.
 */
export function apiErrorText(locale: string, body: ApiErrorJson | null | undefined, status: number, fallback?: string): string {
  const e = body?.error;
  if (e && isMessageCode(e.message_code)) return renderMessage(locale, e);
  if (locale !== 'zh-CN' && e?.message) return e.message;
  if (fallback) return fallback;
  return renderMessage(locale, { message_code: genericCode(e?.code, status) });
}

/** Every bad field of a form's error, field name -> text in `locale`. */
export function apiFieldErrors(locale: string, body: ApiErrorJson | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of body?.error?.fields ?? [])
    if (!(f.field in out)) out[f.field] = renderMessage(locale, f, renderMessage(locale, { message_code: 'field.invalid' }));
  return out;
}

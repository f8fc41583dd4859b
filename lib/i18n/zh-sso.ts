// Simplified Chinese for single sign-on (issue 41 item 5; docs/decisions/052): the provider buttons on
// the login and register pages and the refusals an SSO sign-in can meet. A table of its own (merged in translate.ts).

export const zhSso = {
  'Continue with {name}': '使用 {name} 继续',
  'Redirecting to {name}…': '正在跳转到 {name}…',
  or: '或',
  'Single sign-on': '单点登录',
  'Your identity provider has not verified this email address, so it cannot sign in here or be linked to an account. Verify the address with your provider, or ask your administrator.':
    '你的身份提供方尚未验证此邮箱地址，因此无法用它登录，也无法关联到账户。请先在身份提供方处验证该地址，或联系管理员。',
  'This account is suspended. Contact support to restore access.': '此账户已被暂停，请联系客服恢复访问。',
  'This identity cannot sign in to this account.': '此身份无法登录该账户。',
  'Sign-in through your identity provider failed or was cancelled. Try again.': '通过身份提供方登录失败或已取消，请重试。',
  'Sign-in through your identity provider could not start. Try again in a moment.': '无法开始通过身份提供方登录，请稍后重试。',
} as const;

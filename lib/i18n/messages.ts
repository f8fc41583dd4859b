// Interface text in English and Simplified Chinese. Client-safe. What a client component receives
// must be plain strings (server components cannot pass functions to it): `auth` and `nav` are.

import { PASSWORD_MIN_LENGTH } from '@/lib/auth/password-rules';

export const locales = ['en', 'zh-CN'] as const;
export type Locale = (typeof locales)[number];

const en = {
  skipToContent: 'Skip to content',
  logOut: 'Log out',
  loggingOut: 'Logging out…',
  language: 'Language',
  theme: { label: 'Colour theme', system: 'System theme', light: 'Light', dark: 'Dark' },
  nav: {
    overview: 'Overview',
    keys: 'Keys',
    projects: 'Projects',
    usage: 'Usage',
    logs: 'Logs',
    billing: 'Billing',
    alerts: 'Alerts',
    models: 'Models',
    playground: 'Playground',
    settings: 'Settings',
  },
  pages: {
    overview: { title: 'Overview', description: 'Spend, requests and limits of your account. Days are UTC; CNY at the rate of each request.' },
    usage: {
      title: 'Usage',
      description: 'Spend, requests, tokens and failures per day of your time zone, by model or by API key. CNY at the rate of each request.',
    },
    logs: {
      title: 'Logs',
      description:
        'Every request made with your keys, newest first, in your time zone (UTC on hover; the date filters use your time zone too). Click a row for its attempts and routing.',
    },
    billing: { title: 'Billing', description: 'Prepaid credit in US dollars. Every request is charged to this balance at the listed model prices.' },
    playground: {
      title: 'Playground',
      description:
        'Chat with every model your tier allows, signed in as you: a system prompt, parameters and tools, replies streamed as they arrive, the cost and latency of each turn, and the exact request as code. Billed and logged like any request.',
    },
    settings: {
      title: 'Settings',
      signedInAs: 'Signed in as',
      appearance: 'Appearance',
      appearanceHint: "Follow the system's light or dark mode, or pick one for this browser.",
    },
  },
  firstRun: {
    title: 'Get started',
    done: (n: number, of: number) => `${n} of ${of} done`,
    key: { title: 'Create an API key', body: 'Keys are shown once; copy it somewhere safe.', action: 'Create a key' },
    credit: { title: 'Add credit', body: 'Requests are prepaid; without credit they get 402.', action: 'Add credit' },
    call: {
      title: 'Make your first call',
      body: (base: string) => `Point an OpenAI client at ${base} with your key, or try the playground.`,
      action: 'Open the playground',
    },
    doneMark: ' (done)',
    todoMark: ' (to do)',
  },
  overview: {
    balance: 'Balance',
    atRate: (rate: string) => `at ${rate} CNY/USD`,
    addCredit: 'Add credit',
    spendMonth: 'Spend this month',
    spendToday: 'Spend today',
    requestsMonth: 'Requests this month',
    requestsToday: 'Requests today',
    tokensMonth: 'Tokens this month',
    failed: (n: string) => `${n} failed`,
    noFailures: 'No failures',
    inOut: (i: string, o: string) => `${i} in · ${o} out`,
    last30: 'Last 30 days',
    spentRequests: (spend: string, n: string) => `${spend} spent · ${n} requests`,
    spendUsd: 'Spend (USD)',
    requests: 'Requests',
    yourTier: 'Your tier',
    tierHint: 'Limits applied to every key of this account.',
    rpm: 'Requests / min',
    rph: 'Requests / hour',
    tokensPerDay: 'Tokens / day',
    concurrent: 'Concurrent',
    unlimited: 'Unlimited',
    tierLocked: 'Your tier was set by the operator and does not change automatically.',
    topTier: 'You are on the highest tier.',
    byContact: (tier: string) => `${tier} quotas are arranged by contact: write to us for custom limits.`,
    reached: (tier: string) => `You have reached the ${tier} threshold this month; the upgrade applies automatically.`,
    spendToReach: (amount: string, tier: string) => `Spend ${amount} in a calendar month to move up to ${tier} automatically.`,
    progressTo: (tier: string) => `Progress to ${tier}`,
    spentToGo: (spent: string, left: string) => `${spent} spent this month · ${left} to go`,
  },
  notFound: {
    title: 'Not found',
    body: 'This page or record does not exist, or it belongs to another account. Request ids are listed on the Logs page.',
    back: 'Back to the overview',
  },
  auth: {
    loginTitle: 'Log in',
    loginLead: 'Manage keys, usage and billing.',
    registerTitle: 'Create an account',
    registerLead: 'Get an API key for every model behind one endpoint.',
    email: 'Email',
    password: 'Password',
    logIn: 'Log in',
    loggingIn: 'Logging in…',
    newHere: 'New here?',
    createAnAccount: 'Create an account',
    createAccount: 'Create account',
    creatingAccount: 'Creating account…',
    haveAccount: 'Already have an account?',
    passwordHint: `At least ${PASSWORD_MIN_LENGTH} characters, and not a commonly used password.`,
  },
};

export type Messages = typeof en;

const zh: Messages = {
  skipToContent: '跳到正文',
  logOut: '退出登录',
  loggingOut: '正在退出…',
  language: '语言',
  theme: { label: '配色', system: '跟随系统', light: '浅色', dark: '深色' },
  nav: {
    overview: '概览',
    keys: '密钥',
    projects: '项目',
    usage: '用量',
    logs: '日志',
    billing: '账单',
    alerts: '提醒',
    models: '模型',
    playground: '调试台',
    settings: '设置',
  },
  pages: {
    overview: { title: '概览', description: '账户的消费、请求与限额。按 UTC 日期统计；人民币按每次请求时的汇率折算。' },
    usage: { title: '用量', description: '按你所在时区的日期统计的消费、请求、token 与失败数，可按模型或 API 密钥细分。人民币按每次请求时的汇率折算。' },
    logs: { title: '日志', description: '用你的密钥发出的每个请求，最新在前，按你的时区显示（悬停显示 UTC；日期筛选也按你的时区）。点击一行查看重试与路由。' },
    billing: { title: '账单', description: '预付美元余额。每个请求按所列模型价格从余额扣费。' },
    playground: {
      title: '调试台',
      description:
        '以当前登录身份与你的等级可用的所有模型对话：系统提示词、参数与工具，回复实时流式显示，每轮的费用与延迟，以及可复制的完整请求代码。照常计费并记入日志。',
    },
    settings: { title: '设置', signedInAs: '当前登录：', appearance: '外观', appearanceHint: '跟随系统的浅色或深色模式，或为此浏览器单独选择。' },
  },
  firstRun: {
    title: '开始使用',
    done: (n: number, of: number) => `已完成 ${n}/${of}`,
    key: { title: '创建 API 密钥', body: '密钥只显示一次，请妥善保存。', action: '创建密钥' },
    credit: { title: '充值', body: '请求为预付费；余额不足时返回 402。', action: '去充值' },
    call: { title: '发起第一次调用', body: (base: string) => `把 OpenAI 客户端的地址指向 ${base} 并使用你的密钥，或先在调试台试试。`, action: '打开调试台' },
    doneMark: '（已完成）',
    todoMark: '（待完成）',
  },
  overview: {
    balance: '余额',
    atRate: (rate: string) => `按 ${rate} 人民币/美元`,
    addCredit: '充值',
    spendMonth: '本月消费',
    spendToday: '今日消费',
    requestsMonth: '本月请求',
    requestsToday: '今日请求',
    tokensMonth: '本月 token',
    failed: (n: string) => `失败 ${n} 次`,
    noFailures: '无失败',
    inOut: (i: string, o: string) => `输入 ${i} · 输出 ${o}`,
    last30: '最近 30 天',
    spentRequests: (spend: string, n: string) => `消费 ${spend} · 请求 ${n} 次`,
    spendUsd: '消费（美元）',
    requests: '请求数',
    yourTier: '你的等级',
    tierHint: '限额对本账户的所有密钥生效。',
    rpm: '每分钟请求',
    rph: '每小时请求',
    tokensPerDay: '每日 token',
    concurrent: '并发',
    unlimited: '不限',
    tierLocked: '你的等级由运营方设定，不会自动变化。',
    topTier: '你已是最高等级。',
    byContact: (tier: string) => `${tier} 的配额需联系我们定制。`,
    reached: (tier: string) => `本月已达到 ${tier} 门槛，将自动升级。`,
    spendToReach: (amount: string, tier: string) => `一个自然月内消费 ${amount} 即自动升级到 ${tier}。`,
    progressTo: (tier: string) => `升级到 ${tier} 的进度`,
    spentToGo: (spent: string, left: string) => `本月已消费 ${spent} · 还差 ${left}`,
  },
  notFound: {
    title: '未找到',
    body: '该页面或记录不存在，或属于其他账户。请求 ID 可在“日志”页查看。',
    back: '返回概览',
  },
  auth: {
    loginTitle: '登录',
    loginLead: '管理密钥、用量与账单。',
    registerTitle: '创建账户',
    registerLead: '一个接口地址，一把密钥，调用所有模型。',
    email: '邮箱',
    password: '密码',
    logIn: '登录',
    loggingIn: '正在登录…',
    newHere: '还没有账户？',
    createAnAccount: '创建账户',
    createAccount: '创建账户',
    creatingAccount: '正在创建…',
    haveAccount: '已有账户？',
    passwordHint: `至少 ${PASSWORD_MIN_LENGTH} 个字符，且不能是常见密码。`,
  },
};

export const messages: Record<Locale, Messages> = { en, 'zh-CN': zh };

/** The locale for an Accept-Language header: Chinese in any form reads zh-CN, else English. */
export function localeFromAcceptLanguage(header: string | null | undefined): Locale {
  const first = (header ?? '')
    .split(',')
    .map((part) => {
      const [tag, q] = part.trim().split(';q=');
      return { tag: tag.toLowerCase(), q: q === undefined ? 1 : Number(q) };
    })
    .filter((l) => l.tag && Number.isFinite(l.q) && l.q > 0)
    .sort((a, b) => b.q - a.q)
    .find((l) => l.tag.startsWith('zh') || l.tag.startsWith('en'));
  return first?.tag.startsWith('zh') ? 'zh-CN' : 'en';
}
